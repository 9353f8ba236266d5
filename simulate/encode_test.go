package simulate

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// WriteJSON must print exactly what encoding/json prints.
func TestWriteJSONMatchesEncodingJSON(t *testing.T) {
	docs := validation.Load([]string{benchInput(t, 200, 20)}, nil).Docs
	for _, dir := range []string{"seed000", "seed002", "seed004"} {
		docs = append(docs, validation.Load([]string{filepath.Join(examples, dir)}, nil).Docs...)
	}
	rep, err := Run(docs)
	if err != nil {
		t.Fatal(err)
	}
	odd := Result{
		Resource: Resource{Kind: "K<&>", Name: "a\"b\\c\n\t\x01\u2028\u2029é\xff"},
		Clusters: nil, Feasible: []string{}, Diagnosis: nil,
		Manifests: map[string]map[string]any{
			"x": {"f": 1.5, "big": 1e21, "small": 1e-7, "neg": -0.0, "i": int64(-3), "n": nil, "b": false,
				"empty": map[string]any{}, "list": []any{}, "nested": []any{map[string]any{"k": []any{"v", 2.0}}},
				"strs": []string{"a", "b"}, "raw": json.RawMessage(`{"z":[1,{}]}`)},
			"y": {},
		},
		Overrides:    map[string][]string{"x": {}, "y": nil},
		RenderErrors: map[string]string{"x": "bad <thing>"},
	}
	shared := []string{"P: shared reason"}
	odd2 := Result{Diagnosis: map[string][]string{"a": shared, "b": shared, "c": {"Q: other"}, "d": shared[:1:1]}}
	// Key orders that cover some keys only (manifests and overrides for a
	// cluster outside the placement, diagnosis keys outside the names):
	// the encoder falls back to sorting, forgetting what it had written.
	meta := map[string]any{"name": "m", "labels": map[string]any{"a": "b"}}
	spec := map[string]any{"template": map[string]any{"x": 1.0}}
	m1 := map[string]any{"metadata": meta, "spec": spec}
	m2 := map[string]any{"metadata": meta, "spec": map[string]any{"replicas": int64(2), "template": spec["template"]}}
	odd3 := Result{
		Clusters:     []events.TargetCluster{{Name: "b"}, {Name: "d"}},
		Diagnosis:    map[string][]string{"a": shared, "e": shared, "c": {"Q: other"}},
		Manifests:    map[string]map[string]any{"a": m2, "b": m1, "d": m2},
		Overrides:    map[string][]string{"a": {"x"}, "b": shared, "d": shared},
		clusterNames: []string{"a", "b", "c", "d"},
	}
	odd4 := odd3
	odd4.Manifests = map[string]map[string]any{"b": m1, "d": m2}
	odd4.Diagnosis = map[string][]string{"a": shared, "c": shared}
	odd4.Clusters = []events.TargetCluster{{Name: "b"}, {Name: "b"}, {Name: "d"}}
	whole := Result{Clusters: []events.TargetCluster{{Name: "a", Components: []policy.ComponentReplicas{{Name: "head", Replicas: 1}, {Name: "wo\"rker", Replicas: 4}}}, {Name: "b"}}}
	for _, results := range [][]Result{rep.Results, {odd, odd2, odd3, odd4, whole}, {}, nil} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if results == nil {
			results = []Result{}
		}
		if err := enc.Encode(struct {
			Results []Result `json:"results"`
		}{results}); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := WriteJSON(&got, results); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			g, w := got.String(), want.String()
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Fatalf("WriteJSON differs from encoding/json at byte %d:\ngot  %q\nwant %q", i, excerpt(g, i), excerpt(w, i))
		}
	}
}

func excerpt(s string, i int) string {
	return s[max(0, i-80):min(len(s), i+80)]
}

// An unencodable manifest value fails WriteJSON as encoding/json fails,
// wherever it is among many results (while the next batch is encoded).
func TestWriteJSONError(t *testing.T) {
	for _, bad := range []int{0, 300, 599} {
		results := make([]Result, 600)
		results[bad].Manifests = map[string]map[string]any{"x": {"f": make(chan int)}}
		var buf bytes.Buffer
		err := WriteJSON(&buf, results)
		if _, jerr := json.Marshal(results[bad].Manifests); err == nil || jerr == nil || err.Error() != jerr.Error() {
			t.Errorf("result %d: WriteJSON error %v, encoding/json %v", bad, err, jerr)
		}
	}
}
