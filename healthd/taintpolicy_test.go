package healthd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events/policy"
)

func TestATaintPolicyFileLoadsAsRulesInFileOrder(t *testing.T) {
	rules, err := LoadTaintPolicies("testdata/taint-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[0].Name != "prod-not-ready" || rules[1].Name != "others-unreachable" {
		t.Fatalf("want prod-not-ready then others-unreachable, got %+v", rules)
	}
	if r := rules[0]; r.AddAfter != 120*time.Second || len(r.Taints) != 1 || r.Taints[0].Key != policy.TaintClusterNotReady || r.Taints[0].Effect != "NoExecute" {
		t.Fatalf("prod-not-ready: %+v", r)
	}
	all := TaintPolicy{Rules: rules}
	prod := all.For(policy.ClusterFacts{Name: "c1", Labels: map[string]string{"env": "prod"}})
	dev := all.For(policy.ClusterFacts{Name: "c2", Labels: map[string]string{"env": "dev"}})
	if len(prod.Rules) != 1 || prod.Rules[0].Name != "prod-not-ready" || len(dev.Rules) != 1 || dev.Rules[0].Name != "others-unreachable" {
		t.Fatalf("each cluster gets the rules that target it: prod %+v, dev %+v", prod.Rules, dev.Rules)
	}
	if none := all.For(policy.ClusterFacts{Name: "c3", Labels: map[string]string{"env": "prod"}}); none.Rules == nil {
		t.Fatal("a cluster no rule targets must still not fall back to the default policy")
	}
}

func TestTaintPolicyErrorsNameTheFileLineAndField(t *testing.T) {
	const valid = `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata:
  name: p
spec:
  addOnConditions:
    - conditionType: Ready
      operator: In
      statusValues: ["False"]
  removeOnConditions:
    - conditionType: Ready
      operator: In
      statusValues: ["True"]
  taints:
    - key: cluster.karmada.io/not-ready
      effect: NoExecute
`
	cases := []struct {
		name, old, new string
		want           []string
	}{
		{"an unknown operator", "operator: In\n      statusValues: [\"False\"]", "operator: Equals\n      statusValues: [\"False\"]",
			[]string{"p.yaml:8: spec.addOnConditions[0].operator: want In or NotIn, got \"Equals\""}},
		{"a condition healthd does not report", "conditionType: Ready\n      operator: In\n      statusValues: [\"False\"]", "conditionType: NetworkAvailable\n      operator: In\n      statusValues: [\"False\"]",
			[]string{"p.yaml:7: spec.addOnConditions[0].conditionType: want Ready"}},
		{"a status that does not exist", `statusValues: ["True"]`, `statusValues: ["true"]`,
			[]string{"p.yaml:13: spec.removeOnConditions[0].statusValues[0]: want True, False or Unknown, got \"true\""}},
		{"an unknown field, with its path", "  taints:", "  tolerationSeconds: 5\n  taints:",
			[]string{"p.yaml:14: spec.tolerationSeconds: unknown field"}},
		{"a value of the wrong type", "  taints:", "  addAfterSeconds: soon\n  taints:",
			[]string{`p.yaml:14: spec.addAfterSeconds: invalid type: expected integer, got string "soon"`}},
		{"a key given twice", "  taints:", "  addAfterSeconds: 1\n  addAfterSeconds: 2\n  taints:",
			[]string{`p.yaml:15: spec.addAfterSeconds: duplicate field "addAfterSeconds"`}},
		{"a negative hold", "  taints:", "  addAfterSeconds: -1\n  taints:",
			[]string{"p.yaml:14: spec.addAfterSeconds: must not be negative"}},
		{"the taint healthd sets itself", "effect: NoExecute", "effect: NoSchedule",
			[]string{"p.yaml:15: spec.taints[0]: healthd sets cluster.karmada.io/not-ready:NoSchedule itself"}},
		{"an effect Karmada's policy does not allow", "effect: NoExecute", "effect: PreferNoSchedule",
			[]string{"p.yaml:16: spec.taints[0].effect: want NoSchedule or NoExecute"}},
		{"no removeOnConditions", "  removeOnConditions:\n    - conditionType: Ready\n      operator: In\n      statusValues: [\"True\"]\n", "",
			[]string{"p.yaml:5: spec.removeOnConditions: must list at least one condition"}},
		{"conditions that add and remove at once", `statusValues: ["True"]`, `statusValues: ["False"]`,
			[]string{"p.yaml:10: spec.removeOnConditions: holds together with addOnConditions when Ready is False"}},
		{"the wrong kind and a missing name", "kind: ClusterTaintPolicy\nmetadata:\n  name: p", "kind: PropagationPolicy\nmetadata:\n  labels: {}",
			[]string{"p.yaml:2: kind: want ClusterTaintPolicy", "p.yaml:3: metadata.name: required"}},
		{"two policies with one name", "", "", []string{"p.yaml:21: metadata.name: \"p\" is defined twice (first at line 4)"}},
		{"an unknown field does not hide the other problems", "operator: In\n      statusValues: [\"False\"]", "operatr: In\n      statusValues: [\"False\"]",
			[]string{"p.yaml:8: spec.addOnConditions[0].operatr: unknown field", "p.yaml:7: spec.addOnConditions[0].operator: want In or NotIn, got \"\""}},
		{"broken YAML", "  taints:", "  taints: [", []string{"p.yaml:14: YAML syntax error: "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(valid, c.old, c.new, 1)
			if c.old == "" && c.new == "" {
				doc = valid + "---\n" + valid
			}
			_, err := ParseTaintPolicies("p.yaml", []byte(doc))
			if err == nil {
				t.Fatalf("want an error containing %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("want %q in\n%v", w, err)
				}
			}
			var pe *TaintPolicyError
			if !errors.As(err, &pe) || pe.File != "p.yaml" {
				t.Errorf("want a *TaintPolicyError naming the file, got %T", err)
			}
		})
	}
	if _, err := ParseTaintPolicies("p.yaml", []byte(valid)); err != nil {
		t.Fatalf("the valid policy: %v", err)
	}
	if _, err := ParseTaintPolicies("empty.yaml", []byte("# nothing\n")); err == nil || !strings.Contains(err.Error(), "empty.yaml: no ClusterTaintPolicy") {
		t.Fatalf("an empty file is an error, not a silent switch-off: %v", err)
	}
}

func TestTaintRulesFollowKarmadaWithAHold(t *testing.T) {
	rules, err := LoadTaintPolicies("testdata/taint-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := TaintPolicy{NoExecuteAfter: 5 * time.Second, Rules: rules}.For(policy.ClusterFacts{Name: "c1", Labels: map[string]string{"env": "prod"}})
	run(t, NewTracker(Thresholds{Failure: 3, Success: 2}, p), []step{
		{"Ready", 0, good, false, true, "Ready ready=true since=+0s"},
		{"Suspect is Ready=True: the rule does not hold", 1, answered, false, true, "Suspect ready=true since=+1s failing=+1s"},
		{"", 2, answered, false, false, "Suspect ready=true since=+1s failing=+1s"},
		{"NotReady: the controller's NoSchedule at once; the rule starts holding", 3, answered, false, true,
			"NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s"},
		{"--no-execute-after is not used with rules", 8, ProbeResult{}, true, false, "NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s"},
		{"", 4, refused, false, false, "NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s"},
		{"", 5, refused, false, false, "NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s"},
		{"a swap to Unreachable (Ready Unknown) still holds In [False, Unknown]", 6, refused, false, true,
			"Unreachable ready=false since=+6s failing=+1s unreachable:NoSchedule@+6s"},
		{"one tick before addAfterSeconds: absent", 122, ProbeResult{}, true, false, "Unreachable ready=false since=+6s failing=+1s unreachable:NoSchedule@+6s"},
		{"at 120s after the conditions began to hold: the policy's taint", 123, ProbeResult{}, true, true,
			"Unreachable ready=false since=+6s failing=+1s unreachable:NoSchedule@+6s not-ready:NoExecute@+123s"},
		{"later ticks keep it", 200, refused, false, false,
			"Unreachable ready=false since=+6s failing=+1s unreachable:NoSchedule@+6s not-ready:NoExecute@+123s"},
		{"", 201, good, false, false, "Unreachable ready=false since=+6s failing=+1s unreachable:NoSchedule@+6s not-ready:NoExecute@+123s"},
		{"Ready again: removeOnConditions hold, everything goes", 202, good, false, true, "Ready ready=true since=+202s"},
	})
}

func FuzzParseTaintPolicies(f *testing.F) {
	seed, err := os.ReadFile("testdata/taint-policy.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("spec:\n  taints: [\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := ParseTaintPolicies("f.yaml", data)
		if err == nil && len(rules) == 0 {
			t.Fatal("no error and no rules")
		}
		var pe *TaintPolicyError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("every problem is a *TaintPolicyError: %v", err)
		}
	})
}

func TestNewRefusesABadTaintPolicyFile(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CredentialsKey = filepath.Join(t.TempDir(), "key")
	cfg.TaintPolicyFile = filepath.Join(t.TempDir(), "missing.yaml")
	if _, err := New(cfg, Deps{}); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("want an error naming the file, got %v", err)
	}
}
