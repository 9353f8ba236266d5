package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Warnings before surprises, against a real bus with seed 000 applied:
// each surprise of issue 18 produces its warning or refusal, in order (the
// steps share the bus).
func TestApplyAndJoinWarnBeforeSurprises(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url, _ := seededBus(t)
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	seedPolicy, err := os.ReadFile("../../examples/seed000/propagation-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	failoverPolicy, err := os.ReadFile("../../examples/seed000/failover-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	typo := write("typo.yaml", "apiVersion: app/v1\nkind: Deployment\nmetadata: {name: typo}\nspec:\n  replicas: 1\n")
	dup := write("dup.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: twice}\ndata: {a: \"1\"}\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: twice}\ndata: {a: \"2\"}\n")
	rb := write("rb.yaml", `apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: my-app-deployment, namespace: default}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: my-app}
  clusters: [{name: cluster1, replicas: 6}]
`)
	kubeconfig := write("again.kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://cluster1.example.com:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
	for _, tt := range []struct {
		name       string
		args       []string
		wantExit   int
		wantStderr string
		wantStdout string
	}{
		{"the app/v1 typo is refused and nothing is applied", []string{"apply", "-f", typo, "--timeout", "20s"}, 1,
			"error: " + typo + ": document 1: line 1: apiVersion: app/v1 Deployment is no kind Flotilla knows (did you mean apps/v1 or apps/v1beta1 or apps/v1beta2 or extensions/v1beta1?): " +
				"a typo would start a new kind of template; pass --allow-unknown-kinds to apply a custom resource\nnothing was applied: 1 error(s)\n", ""},
		{"a ResourceBinding (what get placements -o yaml prints) is refused and nothing is applied", []string{"apply", "-f", rb, "--timeout", "20s"}, 1,
			"error: " + rb + ": document 1: line 1: kind: ResourceBinding is a placement Flotilla decides (flotilla get placements shows them); it is not applied: " +
				"apply the template and its policy instead\nnothing was applied: 1 error(s)\n", ""},
		{"a custom resource whose CRD comes in the same apply is known", []string{"apply", "-f", write("widget.yaml", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.flotilla.io}
spec:
  group: example.flotilla.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: example.flotilla.io/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {size: 1}
`), "--timeout", "20s"}, 0, "", "widget.example.flotilla.io/w1 created (generation 1)\n"},
		{"one object twice in one apply is applied twice, with a warning", []string{"apply", "-f", dup, "--timeout", "20s"}, 0,
			"Warning: " + dup + ": document 2: configmap/twice is also " + dup + ": document 1: both are applied, this one last\n",
			"configmap/twice created (generation 1)\nconfigmap/twice configured (generation 2)\n"},
		{"the typo is not a template", []string{"get", "deployments.app"}, 0, "No resources found in default namespace.\n", ""},
		{"a kubeconfig joined already under another name is refused", []string{"join", "cluster1-again", "--cluster-kubeconfig", kubeconfig}, 1,
			"", ""},
		{"a template two policies match says which claims it and why", []string{"apply", "-f", write("deploy.yaml",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: my-app, namespace: default, labels: {app: my-app}}\nspec:\n  replicas: 4\n"+
				"  selector: {matchLabels: {app: my-app}}\n  template:\n    metadata: {labels: {app: my-app}}\n    spec: {containers: [{name: web, image: nginx}]}\n")}, 0,
			"Warning: deployment/my-app -n default is matched by 2 policies (propagationpolicy/failover-policy -n default, propagationpolicy/my-app-policy -n default): " +
				"propagationpolicy/failover-policy -n default claims it, as it claimed the template first and keeps it " +
				"(only a policy with preemption: Always and a higher priority takes a claimed template)\n",
			"deployment.apps/my-app configured (generation 2)\n"},
		{"a template applied before two policies that match it is claimed by the one Karmada's rules pick", []string{"apply", "-f", write("claimed.yaml",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: claimed, namespace: default, labels: {tier: claim-test}}\nspec:\n  replicas: 1\n"+
				"  selector: {matchLabels: {app: claimed}}\n  template:\n    metadata: {labels: {app: claimed}}\n    spec: {containers: [{name: web, image: nginx}]}\n"+
				"---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: a-any, namespace: default}\n"+
				"spec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {tier: claim-test}}}]\n"+
				"  placement: {clusterAffinity: {clusterNames: [cluster1]}}\n"+
				"---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: z-named, namespace: default}\n"+
				"spec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: claimed}]\n  placement: {clusterAffinity: {clusterNames: [cluster2]}}\n"),
			"--timeout", "20s"}, 0,
			"Warning: deployment/claimed -n default is matched by 2 policies (propagationpolicy/a-any -n default, propagationpolicy/z-named -n default): " +
				"propagationpolicy/z-named -n default claims it, as it selects the template by name, propagationpolicy/a-any -n default only by a label selector\n", ""},
		{"explain shows the policy the warning named", []string{"explain", "deploy/claimed"}, 0, "", "Policy:      propagationpolicy/z-named -n default\n"},
		{"an unclaimed template is applied alone", []string{"apply", "-f", write("orphan.yaml",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: orphan, namespace: default, labels: {tier: orphan-test}}\nspec:\n  replicas: 1\n"+
				"  selector: {matchLabels: {app: orphan}}\n  template:\n    metadata: {labels: {app: orphan}}\n    spec: {containers: [{name: web, image: nginx}]}\n"),
			"--timeout", "20s"}, 0, "", "deployment.apps/orphan created"},
		{"two policies applied over it: the first in the file claims it, and the warning says so", []string{"apply", "-f", write("orphan-policies.yaml",
			"apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: o-first, namespace: default}\n"+
				"spec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {tier: orphan-test}}}]\n"+
				"  placement: {clusterAffinity: {clusterNames: [cluster1]}}\n"+
				"---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: o-named, namespace: default}\n"+
				"spec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: orphan}]\n  placement: {clusterAffinity: {clusterNames: [cluster2]}}\n"),
			"--timeout", "20s"}, 0,
			"Warning: deployment/orphan -n default is matched by 2 policies (propagationpolicy/o-first -n default, propagationpolicy/o-named -n default): " +
				"propagationpolicy/o-first -n default claims it, as it claimed the template first and keeps it", ""},
		{"explain shows the first policy claims it", []string{"explain", "deploy/orphan"}, 0, "", "Policy:      propagationpolicy/o-first -n default\n"},
		{"cluster9 in clusterNames is no member", []string{"apply", "-f", write("policy.yaml", strings.Replace(string(seedPolicy), "      - cluster2\n", "      - cluster9\n", 1)), "--timeout", "20s"}, 0,
			"Warning: propagationpolicy/my-app-policy -n default: spec.placement.clusterAffinity.clusterNames[1]: cluster9 is not a member: nothing will be placed there\n",
			"propagationpolicy.policy.karmada.io/my-app-policy configured (generation 2)\n"},
		{"explain lists the names that are no member", []string{"explain", "svc", "my-app"}, 0, "",
			"Not member:  spec.placement.clusterAffinity.clusterNames[1]: cluster9 is not a member: nothing will be placed there\n"},
		{"deleting the Service's only policy leaves it unclaimed", []string{"delete", "pp", "my-app-policy", "--timeout", "20s"}, 0,
			"Warning: service/my-app -n default: deleting propagationpolicy/my-app-policy -n default leaves it unclaimed: it stays where it runs, and no policy places it anew\n",
			"propagationpolicy.policy.karmada.io/my-app-policy deleted\n"},
		{"explain says the claiming policy was deleted", []string{"explain", "svc/my-app"}, 0, "",
			"Policy:      propagationpolicy/my-app-policy -n default (deleted since: no policy claims the template now; it stays where it runs)\n"},
		{"a policy whose selectors no longer select a template it claims leaves it unclaimed", []string{"apply", "-f",
			write("failover.yaml", strings.Replace(string(failoverPolicy), "name: my-app", "name: my-other-app", 1)), "--timeout", "20s"}, 0,
			"Warning: deployment/my-app -n default: propagationpolicy/failover-policy -n default no longer selects it; that leaves it unclaimed: " +
				"it stays where it runs, and no policy places it anew\n",
			"propagationpolicy.policy.karmada.io/failover-policy configured (generation 2)\n"},
		{"explain says why its policy claims it no more", []string{"explain", "deploy/my-app"}, 0, "",
			"Policy:      propagationpolicy/failover-policy -n default (it no longer selects the template: no policy claims the template now; it stays where it runs)\n"},
		{"scaling it warns that the change reaches no member", []string{"scale", "deploy/my-app", "--replicas", "5", "--timeout", "20s"}, 0,
			"Warning: deployment/my-app -n default: no policy claims it (propagationpolicy/failover-policy -n default claimed it, it no longer selects the template): " +
				"this change reaches no member, where it stays as it was placed\n", "deployment.apps/my-app scaled"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCLI(t, url, tt.args...)
			// explain reads the placement, which schedulerd makes after
			// policyd confirmed the apply before: it shows it soon, not at once.
			for deadline := time.Now().Add(10 * time.Second); tt.args[0] == "explain" && !strings.Contains(out, tt.wantStdout) && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
				out, errOut, err = runCLI(t, url, tt.args...)
			}
			if got := statusOf(err); got != tt.wantExit {
				t.Errorf("exit status %d, want %d (%v)\n%s%s", got, tt.wantExit, err, out, errOut)
			}
			if tt.name == "a kubeconfig joined already under another name is refused" {
				if err == nil || !strings.Contains(err.Error(), "its server https://cluster1.example.com:6443 is already joined as cluster1") {
					t.Errorf("join: %v", err)
				}
				return
			}
			if !strings.Contains(errOut, tt.wantStderr) {
				t.Errorf("stderr:\n%s\nwant it to have:\n%s", errOut, tt.wantStderr)
			}
			if !strings.Contains(out, tt.wantStdout) {
				t.Errorf("stdout:\n%s\nwant it to have:\n%s", out, tt.wantStdout)
			}
		})
	}
	out, _, err := runCLI(t, url, "get", "templates")
	for _, row := range strings.Split(out, "\n") {
		if f := strings.Fields(row); len(f) > 4 && f[0] == "my-app" && f[1] == "Deployment" && f[4] != "<none>" {
			t.Errorf("get templates names a policy that no longer selects deployment/my-app:\n%s", out)
		}
	}
	out, _, err = runCLI(t, url, "explain", "deploy", "my-app")
	if err != nil || !strings.Contains(out, "Policy:      propagationpolicy/failover-policy -n default") {
		t.Errorf("explain after the warnings: %v\n%s", err, out)
	}
}
