package strictyaml

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
)

type target struct {
	Name    string            `json:"name"`
	Count   int32             `json:"count,omitempty"`
	Enabled bool              `json:"enabled,omitempty"`
	Items   []item            `json:"items,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
}

type item struct {
	Key string `json:"key"`
}

// decodeAll decodes every document of data into a target.
func decodeAll(data string) ([]target, []events.FieldError) {
	var out []target
	var problems []events.FieldError
	for i, d := range Parse("f.yaml", []byte(data)) {
		problems = append(problems, d.Problems...)
		if d.Root == nil {
			continue
		}
		var t target
		_, ps := Decode("f.yaml", i+1, d.Root, &t)
		problems = append(problems, ps...)
		out = append(out, t)
	}
	return out, problems
}

func TestDecodingIsStrictAndNamesFileDocumentLineAndField(t *testing.T) {
	cases := []struct {
		name         string
		data         string
		want         []target
		wantProblems []events.FieldError
	}{
		{"a valid document decodes", "name: a\ncount: 3\nitems:\n  - key: k\n",
			[]target{{Name: "a", Count: 3, Items: []item{{Key: "k"}}}}, nil},
		{"an unknown field is a problem, with the nearest known name, and the rest decodes", "name: a\ncout: 3\n",
			[]target{{Name: "a"}}, []events.FieldError{{File: "f.yaml", Document: 1, Line: 2, Field: "cout", Reason: `unknown field "cout" (did you mean "count"?)`}}},
		{"a field is matched case-sensitively", "Name: a\n",
			[]target{{}}, []events.FieldError{{File: "f.yaml", Document: 1, Line: 1, Field: "Name", Reason: `unknown field "Name" (did you mean "name"?)`}}},
		{"a key given twice is a problem and the first one stands", "name: a\nname: b\n",
			[]target{{Name: "a"}}, []events.FieldError{{File: "f.yaml", Document: 1, Line: 2, Field: "name", Reason: `duplicate field "name"`}}},
		{"a value of the wrong type is left out", "name: a\nitems:\n  - key: 5\n",
			[]target{{Name: "a", Items: []item{{}}}}, []events.FieldError{{File: "f.yaml", Document: 1, Line: 3, Field: "items[0].key", Reason: "invalid type: expected string, got integer 5"}}},
		{"an integer out of range is a problem", "count: 3000000000\n",
			[]target{{}}, []events.FieldError{{File: "f.yaml", Document: 1, Line: 1, Field: "count", Reason: "invalid value 3000000000: out of range for a 32-bit integer"}}},
		{"a map key is part of the path", "labels:\n  a: [1]\n",
			[]target{{Labels: map[string]string{}}}, []events.FieldError{{File: "f.yaml", Document: 1, Line: 2, Field: "labels[a]", Reason: "invalid type: expected string, got list"}}},
		{"YAML 1.1 booleans read as kubectl reads them", "enabled: yes\n",
			[]target{{Enabled: true}}, nil},
		{"lines count from the start of the file in later documents", "name: a\n---\n# second\nname: b\nextra: 1\n",
			[]target{{Name: "a"}, {Name: "b"}}, []events.FieldError{{File: "f.yaml", Document: 2, Line: 5, Field: "extra", Reason: `unknown field "extra"`}}},
		{"empty documents are skipped and not counted", "---\n# nothing\n---\nname: a\nx: 1\n",
			[]target{{Name: "a"}}, []events.FieldError{{File: "f.yaml", Document: 1, Line: 5, Field: "x", Reason: `unknown field "x"`}}},
		{"a syntax error ends only its own document", "name: [\n---\nname: b\n",
			[]target{{Name: "b"}}, []events.FieldError{{File: "f.yaml", Document: 1, Line: 1, Reason: "YAML syntax error: did not find expected node content"}}},
		{"an alias that contains itself is a problem, not a hang", "name: &x [*x]\n",
			nil, []events.FieldError{{File: "f.yaml", Document: 1, Line: 1, Field: "name[0]", Reason: "alias *x refers to a value that contains it"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, problems := decodeAll(c.data)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.wantProblems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLinesFallBackToTheNearestFieldReadThenToTheDocument(t *testing.T) {
	docs := Parse("f.yaml", []byte("# comment\nname: a\nitems:\n  - key: k\n"))
	var tg target
	lines, problems := Decode("f.yaml", 1, docs[0].Root, &tg)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	cases := []struct {
		path string
		want int
	}{
		{"items[0].key", 4},
		{"items[0].missing", 4},
		{"items[3]", 3},
		{"labels[x]", 2},
		{"", 2},
	}
	for _, c := range cases {
		if got := lines.Line(c.path); got != c.want {
			t.Errorf("line of %q: want %d, got %d", c.path, c.want, got)
		}
	}
}
