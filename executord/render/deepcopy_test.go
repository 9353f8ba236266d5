package render

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// roundTrip is what deepCopy did before it copied structurally.
func roundTrip(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeObject(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDeepCopyIsTheJSONRoundTrip(t *testing.T) {
	cases := map[string]map[string]any{
		"a Deployment as JSON decoding gives it": {"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
			"spec": map[string]any{"replicas": float64(3), "template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "c", "image": "nginx", "ports": []any{map[string]any{"containerPort": int64(80)}}}}}}}},
		"integral floats become int64, fractions stay float64": {"a": float64(2), "b": 2.5, "c": float64(-0.0), "d": 1e20, "e": 1e21, "f": -7.0},
		"nulls, booleans, empty maps and lists":                {"a": nil, "b": true, "c": map[string]any{}, "d": []any{}, "e": []any{nil, false, "x"}},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := deepCopy(m)
			if err != nil {
				t.Fatal(err)
			}
			if want := roundTrip(t, m); !reflect.DeepEqual(got, want) {
				t.Fatalf("deepCopy %#v\nround trip %#v", got, want)
			}
		})
	}
	t.Run("random numbers copy as the round trip reads them", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 5000; i++ {
			var f float64
			switch i % 4 {
			case 0:
				f = float64(r.Int64N(1<<53)) - 1<<52
			case 1:
				f = r.NormFloat64() * math.Pow(10, float64(r.IntN(30)))
			case 2:
				f = math.Trunc(r.NormFloat64() * 1e22)
			default:
				f = r.Float64()
			}
			m := map[string]any{"v": f, "l": []any{f, int64(i)}}
			got, _ := deepCopy(m)
			if want := roundTrip(t, m); !reflect.DeepEqual(got, want) {
				t.Fatalf("%v: deepCopy %#v, round trip %#v", f, got, want)
			}
		}
	})
	t.Run("the copy shares nothing with the template", func(t *testing.T) {
		m := map[string]any{"spec": map[string]any{"list": []any{map[string]any{"k": "v"}}}}
		c, _ := deepCopy(m)
		c["spec"].(map[string]any)["list"].([]any)[0].(map[string]any)["k"] = "changed"
		if m["spec"].(map[string]any)["list"].([]any)[0].(map[string]any)["k"] != "v" {
			t.Fatal("the template was changed through the copy")
		}
	})
	t.Run("a type JSON decoding never produces takes the round trip", func(t *testing.T) {
		m := map[string]any{"n": 3, "s": []string{"a"}}
		got, err := deepCopy(m)
		if err != nil {
			t.Fatal(err)
		}
		if want := roundTrip(t, m); !reflect.DeepEqual(got, want) {
			t.Fatalf("deepCopy %#v, round trip %#v", got, want)
		}
	})
}
