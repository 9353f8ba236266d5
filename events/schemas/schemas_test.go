package schemas

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/flotilla-io/flotilla/events"
)

var update = flag.Bool("update", false, "rewrite docs/schemas from the Go types")

var dir = filepath.Join("..", "..", "docs", "schemas")

// TestDocsSchemasAreWhatTheGoTypesGenerate: docs/schemas holds exactly the
// generated schemas (go test ./events/schemas -update rewrites them), so
// they never drift from the types.
func TestDocsSchemasAreWhatTheGoTypesGenerate(t *testing.T) {
	want, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range want {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	var wantNames []string
	for n := range want {
		wantNames = append(wantNames, n)
	}
	slices.Sort(wantNames)
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Fatalf("files in docs/schemas (-generated +present); run go test ./events/schemas -update:\n%s", diff)
	}
	for _, n := range wantNames {
		got, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want[n]), string(got)); diff != "" {
			t.Errorf("docs/schemas/%s (-generated +present); run go test ./events/schemas -update:\n%s", n, diff)
		}
	}
}

// validate validates data against the schema Reflect gives for t.
func validate(t *testing.T, typ events.Type, data string) error {
	t.Helper()
	b, err := json.Marshal(Reflect(typ))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(events.DataSchema(typ), doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(events.DataSchema(typ))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(v)
}

func encoded(t *testing.T, v any) string {
	t.Helper()
	b, err := events.MarshalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSchemasAcceptWhatTheDaemonsEncodeAndRefuseMalformedInput(t *testing.T) {
	for _, tt := range []struct {
		name  string
		typ   events.Type
		data  string
		valid bool
	}{
		{"a zero work status, its nil slices encoded as null, is valid", events.TypeWorkStatusChanged, encoded(t, events.WorkStatus{}), true},
		{"a zero placement is valid", events.TypePlacementDecided, encoded(t, events.PlacementDecision{}), true},
		{"a binding with a template and quantities is valid", events.TypeBindingChanged,
			`{"key":{"kind":"Deployment","name":"a"},"template":{"kind":"Deployment"},"replicaRequirements":{"cpu":"100m","memory":1024}}`, true},
		{"a deletion names apiVersion, kind and name", events.TypeObjectDeleted, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, true},
		{"a deletion without its kind is refused", events.TypeObjectDeleted, `{"apiVersion":"v1","metadata":{"name":"a"}}`, false},
		{"an applied object without metadata.name is refused", events.TypeObjectApplied, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`, false},
		{"a work status with a string generation is refused", events.TypeWorkStatusChanged, `{"generation":"1"}`, false},
		{"a work status with an unknown field is refused", events.TypeWorkStatusChanged, `{"genration":1}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(t, tt.typ, tt.data)
			if (err == nil) != tt.valid {
				t.Errorf("valid = %v, want %v: %v", err == nil, tt.valid, err)
			}
		})
	}
}
