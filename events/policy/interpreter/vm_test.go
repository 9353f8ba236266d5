package interpreter

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events/policy"
)

// eval runs body inside ReflectStatus and returns the status table it
// builds: `return {v = <expr>}` style scripts.
func eval(t *testing.T, vm *VM, body string) (map[string]any, error) {
	t.Helper()
	return vm.ReflectStatus("function ReflectStatus(m)\n"+body+"\nend", map[string]any{"spec": map[string]any{"n": 1.0}})
}

// TestEnvironment holds the Lua environment to reference features §7.5,
// one rule per case.
func TestEnvironment(t *testing.T) {
	cases := []struct {
		name, body string
		want       map[string]any
		wantErr    string
	}{
		{"numbers are floats printed as Lua 5.1 does", `return {v = tostring(3/1) .. "," .. tostring(7/2)}`, map[string]any{"v": "3,3.5"}, ""},
		{"unpack is global", `local a, b = unpack({"x", "y"}); return {v = a .. b}`, map[string]any{"v": "xy"}, ""},
		{"table, math and string are open", `return {v = table.concat({math.floor(2.5), string.upper("a"), ("b"):upper()}, ",")}`, map[string]any{"v": "2,A,B"}, ""},
		{"string.format and find work", `return {v = string.format("%d-%s", 3, "x"), f = string.find("abc", "b")}`, map[string]any{"v": "3-x", "f": 2.0}, ""},
		{"io is not opened", `return {v = type(io)}`, map[string]any{"v": "nil"}, ""},
		{"debug is not opened", `return {v = type(debug)}`, map[string]any{"v": "nil"}, ""},
		{"coroutine is not opened", `return {v = type(coroutine)}`, map[string]any{"v": "nil"}, ""},
		{"os keeps only time and date", `return {v = type(os.time()) .. "," .. type(os.date("%Y")) .. "," .. type(os.execute) .. "," .. type(os.getenv) .. "," .. type(os.exit)}`,
			map[string]any{"v": "number,string,nil,nil,nil"}, ""},
		{"require sees the same os", `return {v = type(require("os").execute)}`, map[string]any{"v": "nil"}, ""},
		{"pcall remains and catches", `local ok, e = pcall(error, "boom"); return {v = tostring(ok)}`, map[string]any{"v": "false"}, ""},
		{"require of a file module fails", `require("json")`, nil, "module json not found"},
		{"package.loadlib raises", `package.loadlib("x", "y")`, nil, "loadlib is not supported"},
		{"string.gsub raises", `string.gsub("a", "a", "b")`, nil, "string.gsub is not supported"},
		{"string.rep raises", `string.rep("a", 3)`, nil, "string.rep is not supported"},
		{"string.dump raises", `string.dump(print)`, nil, "string.dump is not supported"},
		{"a string argument over 1,000,000 bytes is refused", `local s = "0123456789"; for i = 1, 17 do s = s .. s end; return {v = string.len(s)}`, nil, "longer than 1000000 bytes"},
		{"a string argument of 655,360 bytes is fine", `local s = "0123456789"; for i = 1, 16 do s = s .. s end; return {v = string.len(s)}`, map[string]any{"v": 655360.0}, ""},
	}
	for _, name := range []string{"load", "loadfile", "loadstring", "dofile", "getfenv", "setfenv", "getmetatable", "setmetatable",
		"rawequal", "rawget", "rawset", "collectgarbage", "module", "newproxy"} {
		cases = append(cases, struct {
			name, body string
			want       map[string]any
			wantErr    string
		}{name + " raises not supported", name + "()", nil, name + " is not supported"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := eval(t, New(), c.body)
			if failedAs(t, err, c.wantErr) {
				return
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompile(t *testing.T) {
	cases := []struct {
		name, script string
		wantLine     int
	}{
		{"a valid script compiles", workerAggregate, 0},
		{"Lua 5.3's integer division does not parse", "function F(a)\n  return a // 2\nend", 2},
		{"an unclosed function names the last line of the script", "function F(a)\n  return a\n\n", 2},
		{"a bad token names its line", "local x = 1\nlocal y = = 2", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Compile(c.script)
			if c.wantLine == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("compiled, want an error")
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %T %v, want a *SyntaxError", err, err)
			}
			if got := se.Line; got != c.wantLine {
				t.Errorf("line = %d, want %d (%v)", got, c.wantLine, err)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	cases := []struct{ name, script string }{
		{"a loop in the function", "function GetReplicas(o) while true do end end"},
		{"a loop in the script body", "while true do end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vm := New()
			start := time.Now()
			_, _, err := vm.Replicas(c.script, map[string]any{})
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), "script exceeded the 1s deadline") {
				t.Fatalf("err = %v, want the deadline", err)
			}
			if took < Timeout || took > 3*Timeout {
				t.Errorf("took %s, want about %s", took, Timeout)
			}
			// The state goes back to the pool usable.
			if n, _, err := vm.Replicas(workerReplicas, worker(map[string]any{"size": 1.0})); err != nil || n != 1 {
				t.Errorf("after the deadline: %d, %v", n, err)
			}
		})
	}
}

// TestAScriptThatAllocatesWithoutEndIsStoppedAtTheMemoryLimit: a string
// doubled in a loop, a table grown in a loop, in the script body and in
// the function, each stopped well before the deadline (lowered here, so
// that a broken limit allocates a GiB or two, not more; it stays far above
// the few milliseconds the limit takes, since a machine loaded by the e2e
// suite once let 300 ms pass first), and the state that held it not reused.
func TestAScriptThatAllocatesWithoutEndIsStoppedAtTheMemoryLimit(t *testing.T) {
	cases := []struct{ name, script string }{
		{"a string doubled in the function", `function GetReplicas(o) local s = "x" for i = 1, 28 do s = s .. s end return #s, nil end`},
		{"a table grown in the script body", `big = {} local s = string.format("%1000s", "") for i = 1, 1e9 do big[i] = s .. i end`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vm := New()
			vm.memory, vm.timeout = 16<<20, 1500*time.Millisecond
			_, _, err := vm.Replicas(c.script, map[string]any{})
			if err == nil || !strings.Contains(err.Error(), "script exceeded the memory limit (16 MiB allocated in one call)") {
				t.Fatalf("err = %v, want the memory limit", err)
			}
			if n, _, err := vm.Replicas(workerReplicas+"\nassert(big == nil)", worker(map[string]any{"size": 1.0})); err != nil || n != 1 {
				t.Errorf("after the memory limit: %d, %v (want a fresh state)", n, err)
			}
		})
	}
}

func TestPooledStatesKeepGlobals(t *testing.T) {
	vm := New()
	if _, err := eval(t, vm, `leaked = "yes"; return {}`); err != nil {
		t.Fatal(err)
	}
	got, err := eval(t, vm, `return {v = leaked}`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"v": "yes"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestConversions holds the conversions to reference features §7.6.
func TestConversions(t *testing.T) {
	cases := []struct {
		name, body string
		want       map[string]any
		wantErr    string
	}{
		{"nulls vanish going in", `local n = 0; for k in pairs(m.spec) do n = n + 1 end; return {v = n, gone = m.spec.gone == nil}`, map[string]any{"v": 1.0, "gone": true}, ""},
		{"mixed keys fail", `return {v = {1, a = 2}}`, nil, "cannot encode mixed or invalid key types"},
		{"a sparse list fails", `local l = {}; l[1] = 1; l[3] = 3; return {v = l}`, nil, "cannot encode sparse array"},
		{"a table reached twice fails", `local t = {x = 1}; return {a = t, b = t}`, nil, "cannot encode recursively nested tables to JSON"},
		{"a function fails", `return {v = print}`, nil, "cannot encode function to JSON"},
		{"an empty nested table is deleted when no reference had it", `return {v = 1, e = {}, l = {{}, 2}}`, map[string]any{"v": 1.0, "l": []any{2.0}}, ""},
		{"lists come out as lists", `return {v = {"a", "b"}}`, map[string]any{"v": []any{"a", "b"}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := New().ReflectStatus("function ReflectStatus(m)\n"+c.body+"\nend", map[string]any{"spec": map[string]any{"n": 1.0, "gone": nil}})
			if failedAs(t, err, c.wantErr) {
				return
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestKube holds the kube module to reference features §7.5.4.
func TestKube(t *testing.T) {
	pod := map[string]any{"spec": map[string]any{
		"serviceAccountName": "runner",
		"nodeSelector":       map[string]any{"disk": "ssd"},
		"containers": []any{
			map[string]any{"name": "a", "resources": map[string]any{"requests": map[string]any{"cpu": "500m"}, "limits": map[string]any{"memory": "1Gi"}},
				"envFrom": []any{map[string]any{"configMapRef": map[string]any{"name": "env"}}}},
			map[string]any{"name": "b", "resources": map[string]any{"requests": map[string]any{"cpu": "250m", "memory": "512Mi"}}},
		},
		"initContainers": []any{map[string]any{"name": "init", "resources": map[string]any{"requests": map[string]any{"cpu": "2"}}}},
		"volumes":        []any{map[string]any{"name": "v", "secret": map[string]any{"secretName": "creds"}}},
	}}
	cases := []struct {
		name, body string
		want       map[string]any
		wantErr    string
	}{
		{"resourceAdd sums quantity strings and skips nil", `local kube = require("kube"); return {v = kube.resourceAdd("1", "500m", nil)}`, map[string]any{"v": "1500m"}, ""},
		{"resourceAdd refuses a number", `local kube = require("kube"); return {v = kube.resourceAdd("1", 2)}`, nil, "string expected, got number"},
		{"getResourceQuantity gives a number", `local kube = require("kube"); return {v = kube.getResourceQuantity("1Gi")}`, map[string]any{"v": 1073741824.0}, ""},
		{"getPodDependencies lists what the template references", `local kube = require("kube"); return {v = kube.getPodDependencies(m.tpl, "team")}`,
			map[string]any{"v": []any{
				map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "team", "name": "env"},
				map[string]any{"apiVersion": "v1", "kind": "Secret", "namespace": "team", "name": "creds"},
				map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "namespace": "team", "name": "runner"},
			}}, ""},
		{"getPodDependencies with a nil namespace uses default", `local kube = require("kube"); return {v = kube.getPodDependencies(m.tpl, nil)[1].namespace}`,
			map[string]any{"v": "default"}, ""},
		{"accuratePodRequirements of a template without requests or constraints is nil", `local kube = require("kube"); return {v = kube.accuratePodRequirements({spec = {containers = {{name = "x"}}}}) == nil}`,
			map[string]any{"v": true}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := New().ReflectStatus("function ReflectStatus(m)\n"+c.body+"\nend", map[string]any{"tpl": pod})
			if failedAs(t, err, c.wantErr) {
				return
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("accuratePodRequirements: containers summed against the largest init container, limits as requests, the node selector", func(t *testing.T) {
		_, req, err := New().Replicas(`local kube = require("kube")
		function GetReplicas(o) return 1, kube.accuratePodRequirements(o.tpl) end`, map[string]any{"tpl": pod})
		if err != nil {
			t.Fatal(err)
		}
		want := &policy.ReplicaRequirements{
			NodeClaim:       &policy.NodeClaim{NodeSelector: map[string]string{"disk": "ssd"}},
			ResourceRequest: corev1.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("1536Mi")},
		}
		if diff := cmp.Diff(want.NodeClaim, req.NodeClaim); diff != "" {
			t.Errorf("node claim (-want +got):\n%s", diff)
		}
		for name, q := range want.ResourceRequest {
			if got := req.ResourceRequest[name]; got.Cmp(q) != 0 {
				t.Errorf("%s = %s, want %s", name, got.String(), q.String())
			}
		}
	})
}
