package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// halt stops every daemon (interrupt, then kill) without forgetting them, so
// that a test's own cleanup can delete member objects without executord's
// drift repair putting them back; stopAll still prints the logs on failure.
func (s *system) halt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.procs {
		if c.Process != nil {
			_ = c.Process.Signal(os.Interrupt)
		}
	}
	time.Sleep(500 * time.Millisecond)
	for _, c := range s.procs {
		if c.Process != nil {
			_ = c.Process.Kill()
		}
	}
}

// workRow returns the `get work` line of one template name in one cluster.
func workRow(out, name, cluster string) string {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == name && f[1] == cluster {
			return l
		}
	}
	return ""
}

// TestEveryOverriderKindIsVisibleInTheMemberObjects: every overrider kind
// (image, command, args, labels, annotations, plaintext, field) of an
// OverridePolicy targeting cluster1 shows in cluster1's objects and not in
// cluster2's; a ClusterOverridePolicy applies first, so where both set the
// same label the OverridePolicy wins; the applied policies are recorded on
// the objects and in `get work -o wide`.
func TestEveryOverriderKindIsVisibleInTheMemberObjects(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	s.joinAll()
	ns := uniqueNS("overriders")
	t.Cleanup(func() { s.halt(); s.deleteNamespace(ns) })
	s.applyYAML("overriders.yaml", fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: %[1]s}
data:
  config: |
    server:
      port: 80
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s, labels: {app: web}}
spec:
  replicas: 0
  revisionHistoryLimit: 10
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25.3
        command: [nginx]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  - {apiVersion: v1, kind: ConfigMap, name: app-config}
  placement: {clusterAffinity: {clusterNames: [cluster1, cluster2]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: global-tier}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: %[1]s, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [cluster1]}
    overriders:
      labelsOverrider:
      - operator: add
        value: {tier: from-cluster-policy, cluster-policy: applied}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web-overrides, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [cluster1]}
    overriders:
      imageOverrider:
      - {component: Tag, operator: replace, value: "1.27.0"}
      commandOverrider:
      - {containerName: web, operator: add, value: ["-g", "daemon off;"]}
      argsOverrider:
      - {containerName: web, operator: add, value: ["--verbose"]}
      labelsOverrider:
      - operator: add
        value: {tier: from-namespaced-policy}
      annotationsOverrider:
      - operator: add
        value: {owner: team-a}
      plaintext:
      - {path: /spec/revisionHistoryLimit, operator: replace, value: 3}
      - {path: /spec/template/spec/containers/0/env, operator: add, value: [{name: REGION, value: east}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: config-port, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: app-config}]
  overrideRules:
  - targetCluster: {clusterNames: [cluster1]}
    overriders:
      fieldOverrider:
      - fieldPath: /data/config
        yaml:
        - {subPath: /server/port, operator: replace, value: 8080}
`, ns))

	ctx := context.Background()
	c1, c2 := s.member("cluster1"), s.member("cluster2")
	var d1 *appsv1.Deployment
	var cm1 *corev1.ConfigMap
	eventually(t, 60*time.Second, "web and app-config with overrides in cluster1", func() error {
		d, err := c1.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27.0" {
			return fmt.Errorf("image %s", d.Spec.Template.Spec.Containers[0].Image)
		}
		cm, err := c1.CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{})
		if err != nil {
			return err
		}
		// app-config is a template of its own: its override arrives on its
		// own placement, not with web's.
		if cm.Annotations["policy.karmada.io/applied-overrides"] == "" {
			return fmt.Errorf("app-config has no applied-overrides annotation yet")
		}
		d1, cm1 = d, cm
		return nil
	})
	c := d1.Spec.Template.Spec.Containers[0]
	if want := []string{"nginx", "-g", "daemon off;"}; !slices.Equal(c.Command, want) {
		t.Errorf("cluster1 command = %q, want %q", c.Command, want)
	}
	if want := []string{"--verbose"}; !slices.Equal(c.Args, want) {
		t.Errorf("cluster1 args = %q, want %q", c.Args, want)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "REGION" || c.Env[0].Value != "east" {
		t.Errorf("cluster1 env = %+v, want REGION=east", c.Env)
	}
	if d1.Spec.RevisionHistoryLimit == nil || *d1.Spec.RevisionHistoryLimit != 3 {
		t.Errorf("cluster1 revisionHistoryLimit = %v, want 3", d1.Spec.RevisionHistoryLimit)
	}
	if got := d1.Labels["tier"]; got != "from-namespaced-policy" {
		t.Errorf("cluster1 label tier = %q: the OverridePolicy is applied after the ClusterOverridePolicy and should win", got)
	}
	if got := d1.Labels["cluster-policy"]; got != "applied" {
		t.Errorf("cluster1 label cluster-policy = %q: the ClusterOverridePolicy's own label is missing", got)
	}
	if got := d1.Annotations["owner"]; got != "team-a" {
		t.Errorf("cluster1 annotation owner = %q", got)
	}
	if got := cm1.Data["config"]; got != "server:\n  port: 8080\n" {
		t.Errorf("cluster1 app-config config = %q, want port 8080", got)
	}

	// The applied policies, Karmada's way: one entry per rule applied.
	type shadow struct {
		PolicyName string         `json:"policyName"`
		Overriders map[string]any `json:"overriders"`
	}
	readShadows := func(what, v string) []shadow {
		var out []shadow
		if v == "" {
			t.Errorf("%s: annotation missing", what)
			return nil
		}
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			t.Errorf("%s: %v: %s", what, err, v)
		}
		return out
	}
	if sh := readShadows("web applied-overrides", d1.Annotations["policy.karmada.io/applied-overrides"]); len(sh) != 1 || sh[0].PolicyName != "web-overrides" {
		t.Errorf("web applied-overrides = %+v", sh)
	} else {
		for _, k := range []string{"imageOverrider", "commandOverrider", "argsOverrider", "labelsOverrider", "annotationsOverrider", "plaintext"} {
			if sh[0].Overriders[k] == nil {
				t.Errorf("web applied-overrides lacks %s: %+v", k, sh[0].Overriders)
			}
		}
	}
	if sh := readShadows("web applied-cluster-overrides", d1.Annotations["policy.karmada.io/applied-cluster-overrides"]); len(sh) != 1 || sh[0].PolicyName != "global-tier" {
		t.Errorf("web applied-cluster-overrides = %+v", sh)
	}
	if sh := readShadows("app-config applied-overrides", cm1.Annotations["policy.karmada.io/applied-overrides"]); len(sh) != 1 || sh[0].PolicyName != "config-port" || sh[0].Overriders["fieldOverrider"] == nil {
		t.Errorf("app-config applied-overrides = %+v", sh)
	}
	if _, ok := cm1.Annotations["policy.karmada.io/applied-cluster-overrides"]; ok {
		t.Errorf("app-config has applied-cluster-overrides though no ClusterOverridePolicy selects it: %v", cm1.Annotations)
	}

	// cluster2 holds the templates as written.
	var d2 *appsv1.Deployment
	var cm2 *corev1.ConfigMap
	eventually(t, 30*time.Second, "web and app-config in cluster2", func() error {
		var err error
		if d2, err = c2.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
			return err
		}
		cm2, err = c2.CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{})
		return err
	})
	c = d2.Spec.Template.Spec.Containers[0]
	if c.Image != "nginx:1.25.3" || !slices.Equal(c.Command, []string{"nginx"}) || len(c.Args) != 0 || len(c.Env) != 0 {
		t.Errorf("cluster2 container was overridden: %+v", c)
	}
	if d2.Spec.RevisionHistoryLimit == nil || *d2.Spec.RevisionHistoryLimit != 10 {
		t.Errorf("cluster2 revisionHistoryLimit = %v, want 10", d2.Spec.RevisionHistoryLimit)
	}
	if _, ok := d2.Labels["tier"]; ok {
		t.Errorf("cluster2 labels overridden: %v", d2.Labels)
	}
	for _, k := range []string{"owner", "policy.karmada.io/applied-overrides", "policy.karmada.io/applied-cluster-overrides"} {
		if _, ok := d2.Annotations[k]; ok {
			t.Errorf("cluster2 web has annotation %s: %v", k, d2.Annotations)
		}
	}
	if got := cm2.Data["config"]; got != "server:\n  port: 80\n" {
		t.Errorf("cluster2 app-config config = %q, want the template's port 80", got)
	}
	if _, err := s.member("cluster3").AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err == nil {
		t.Errorf("web reached cluster3")
	}

	// get work -o wide: the OVERRIDES column, in application order.
	eventually(t, 30*time.Second, "get work -o wide to list the applied policies", func() error {
		out := s.mustCLI("get", "work", "-n", ns, "-o", "wide")
		if r := workRow(out, "web", "cluster1"); !strings.Contains(r, "ClusterOverridePolicy/global-tier,OverridePolicy/"+ns+"/web-overrides") {
			return fmt.Errorf("web cluster1 row lacks the policies in order:\n%s", out)
		}
		if r := workRow(out, "app-config", "cluster1"); !strings.Contains(r, "OverridePolicy/"+ns+"/config-port") {
			return fmt.Errorf("app-config cluster1 row lacks config-port:\n%s", out)
		}
		for _, n := range []string{"web", "app-config"} {
			if r := workRow(out, n, "cluster2"); r == "" || strings.Contains(r, "OverridePolicy") {
				return fmt.Errorf("%s cluster2 row missing or lists a policy:\n%s", n, out)
			}
		}
		return nil
	})
}
