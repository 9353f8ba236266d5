package strictyaml

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events"
)

func dumpTree(v *Node, sb *strings.Builder) {
	if v == nil {
		sb.WriteString("<nil>")
		return
	}
	fmt.Fprintf(sb, "(%d %q %d %v %v", v.kind, v.str, v.i, v.f, v.b)
	for i, k := range v.keys {
		fmt.Fprintf(sb, " %q@%d:", k, v.keyLines[i])
		dumpTree(v.vals[i], sb)
	}
	for _, it := range v.items {
		sb.WriteString(" -")
		dumpTree(it, sb)
	}
	sb.WriteString(")")
}

// The reflection-free conversion of decoded JSON builds the very tree, and
// reports the very problems, the reflective one does.
func TestConvertingDecodedJSONMatchesTheReflectiveConversion(t *testing.T) {
	docs := []string{
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web","z":"1"}},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"100m"}}}]}}}}`,
		`{"n":1e11,"f":1.5,"neg":-7,"big":1e300,"b":true,"nil":null,"empty":{},"list":[],"nested":[[1,2],[{"a":null}]]}`,
		`{"s":"","u":"日本","quoted":"\"x\""}`,
	}
	for _, d := range docs {
		var x any
		if err := json.Unmarshal([]byte(d), &x); err != nil {
			t.Fatal(err)
		}
		var p2 []events.FieldError
		var a, b strings.Builder
		fast, p1 := FromGo(x)
		dumpTree(fast, &a)
		dumpTree(fromGoReflect(x, "", &p2, 0), &b)
		if a.String() != b.String() || fmt.Sprint(p1) != fmt.Sprint(p2) {
			t.Errorf("%s:\nfast    %s %v\nreflect %s %v", d, a.String(), p1, b.String(), p2)
		}
	}
	// Problems name the field path.
	_, probs := FromGo(map[string]any{"spec": map[string]any{"list": []any{1.0, math.Inf(1)}}})
	if len(probs) != 1 || probs[0].Field != "spec.list[1]" {
		t.Fatalf("an infinity must be reported at spec.list[1]: %+v", probs)
	}
}
