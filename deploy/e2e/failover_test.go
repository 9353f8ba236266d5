package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
)

// sandboxCluster runs `make cluster-stop|cluster-start NAME=<name>` in the
// repository, as a user would, against this run's sandbox.
func (s *system) sandboxCluster(verb, name string) {
	s.t.Helper()
	keepLockFromMembers()
	cmd := exec.Command("make", "-s", "-C", filepath.Join("..", ".."), "cluster-"+verb, "NAME="+name)
	cmd.Env = append(os.Environ(), "SANDBOX_DIR="+s.sandbox)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("make cluster-%s NAME=%s: %v\n%s", verb, name, err, out)
	}
}

// stoppableMember is a sandbox member a test stops and starts with
// sandboxCluster; one still stopped when the test ends is started again.
type stoppableMember struct {
	s       *system
	name    string
	stopped bool
}

func (s *system) stoppable(name string) *stoppableMember {
	m := &stoppableMember{s: s, name: name}
	s.t.Cleanup(func() {
		if m.stopped {
			s.sandboxCluster("start", name)
		}
	})
	return m
}

func (m *stoppableMember) stop() {
	m.s.sandboxCluster("stop", m.name)
	m.stopped = true
}

func (m *stoppableMember) start() {
	m.s.sandboxCluster("start", m.name)
	m.stopped = false
}

// latestPlacement reads a template's latest placement from the bus.
func (s *system) latestPlacement(ns, name string) (events.PlacementDecision, error) {
	ps, err := s.decisionsIn(ns)
	if err != nil {
		return events.PlacementDecision{}, err
	}
	for _, p := range ps {
		if p.Key.Name == name {
			return p, nil
		}
	}
	return events.PlacementDecision{}, fmt.Errorf("no placement for %s/%s yet", ns, name)
}

// memberReplicas: spec.replicas of a Deployment in each member (-1: absent).
func (s *system) memberReplicas(ns, name string, clusters ...string) (map[string]int32, error) {
	out := map[string]int32{}
	for _, m := range clusters {
		d, err := s.member(m).AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			out[m] = -1
		case err != nil:
			return nil, err
		default:
			out[m] = *d.Spec.Replicas
			if d.Status.AvailableReplicas != *d.Spec.Replicas {
				return nil, fmt.Errorf("%s in %s: %d of %d available", name, m, d.Status.AvailableReplicas, *d.Spec.Replicas)
			}
		}
	}
	return out, nil
}

func expectMembers(s *system, what, ns, name string, want map[string]int32) {
	s.t.Helper()
	var clusters []string
	for c := range want {
		clusters = append(clusters, c)
	}
	eventually(s.t, 120*time.Second, what, func() error {
		got, err := s.memberReplicas(ns, name, clusters...)
		if err != nil {
			return err
		}
		for c, n := range want {
			if got[c] != n {
				return fmt.Errorf("%s: want %v, got %v (-1: absent)", name, want, got)
			}
		}
		return nil
	})
}

// TestClusterStopMovesWorkAndItsReturnPurgesTheOldCopyWithoutMovingBack is
// issue 5's cluster failover on the sandbox, for a Divided workload (2/2/2
// with seed 000's failover block, tolerations shortened) and for seed 000's
// own Duplicated example: cluster1 is stopped with `make cluster-stop`, both
// move off it; it is started again, the old copies are purged and nothing
// moves back.
func TestClusterStopMovesWorkAndItsReturnPurgesTheOldCopyWithoutMovingBack(t *testing.T) {
	s := newSystem(t)
	cluster1 := s.stoppable("cluster1")
	s.startAll()
	s.joinAll()
	ns := uniqueNS("failover")
	t.Cleanup(func() { s.deleteNamespace(ns) })

	seed, err := os.ReadFile(filepath.Join(seed000, "failover-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	app, err := os.ReadFile(filepath.Join(seed000, "my-app.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Seed 000's failover policy as written, with its 60 s toleration
	// shortened to 5 s and the grace period to 60 s, in this test's namespace.
	// It places my-app's ConfigMap too: a kind without a health rule.
	seedPolicy := strings.NewReplacer("namespace: default", "namespace: "+ns, "tolerationSeconds: 60", "tolerationSeconds: 5", "gracePeriodSeconds: 600", "gracePeriodSeconds: 60",
		"    name: my-app\n", "    name: my-app\n  - {apiVersion: v1, kind: ConfigMap, name: my-app-settings}\n").Replace(string(seed))
	myApp := strings.ReplaceAll(string(app), "namespace: default", "namespace: "+ns)
	settings := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: my-app-settings, namespace: " + ns + "}\ndata: {mode: fast}\n"
	s.applyYAML("seed000-failover.yaml", seedPolicy+"\n---\n"+myApp+"\n---\n"+settings)
	s.applyYAML("divided.yaml", dividedWithFailover(ns, "web", 10, "Graciously", 60))
	expectMembers(s, "web at 2/2/2", ns, "web", map[string]int32{"cluster1": 2, "cluster2": 2, "cluster3": 2})
	myAppReplicas := int32(6)
	expectMembers(s, "seed 000's my-app duplicated to cluster1 and cluster2", ns, "my-app", map[string]int32{"cluster1": myAppReplicas, "cluster2": myAppReplicas, "cluster3": -1})
	if _, err := s.member("cluster1").CoreV1().ConfigMaps(ns).Get(context.Background(), "my-app-settings", metav1.GetOptions{}); err != nil {
		t.Fatalf("my-app-settings in cluster1: %v", err)
	}

	stoppedAt := time.Now()
	cluster1.stop()
	expectMembers(s, "web at 3/3 on cluster2 and cluster3", ns, "web", map[string]int32{"cluster2": 3, "cluster3": 3})
	t.Logf("web ran 3/3 on cluster2 and cluster3 %s after cluster1 was stopped", time.Since(stoppedAt).Round(time.Second))
	eventually(t, 60*time.Second, "both placements to leave cluster1 with an eviction", func() error {
		for name, want := range map[string]string{"web": "cluster2=3,cluster3=3", "my-app": "cluster2=" + fmt.Sprint(myAppReplicas)} {
			p, err := s.latestPlacement(ns, name)
			if err != nil {
				return err
			}
			if got := events.FormatTargets(p.Clusters); got != want || len(p.Evictions) != 1 || p.Evictions[0].Cluster != "cluster1" {
				return fmt.Errorf("%s: placement %s evictions %+v, want %s and cluster1 evicted", name, got, p.Evictions, want)
			}
		}
		return nil
	})
	// The ConfigMap, judged Healthy wherever it is applied as Karmada
	// judges a kind without a health interpreter, has its evicted copy
	// released for purging as soon as cluster2 holds it. Judged Unknown,
	// its eviction was kept forever and cluster1 never got it back.
	eventually(t, 60*time.Second, "my-app-settings's eviction from cluster1 released", func() error {
		p, err := s.latestPlacement(ns, "my-app-settings")
		if err != nil {
			return err
		}
		if len(p.Evictions) != 1 || p.Evictions[0].Cluster != "cluster1" || p.Evictions[0].PurgedAt == nil {
			return fmt.Errorf("placement %s evictions %+v, want cluster1's released", events.FormatTargets(p.Clusters), p.Evictions)
		}
		return nil
	})
	explain := s.mustCLI("explain", "deployment/web", "-n", ns)
	if !strings.Contains(explain, "Evictions") || !strings.Contains(explain, "ApplicationFailure") {
		t.Fatalf("explain must show the eviction:\n%s", explain)
	}

	cluster1.start()
	// The old copies in cluster1 are purged once it is back (the purge was
	// held while it was down); nothing moves back.
	eventually(t, 120*time.Second, "cluster1's old copies to be purged on its return", func() error {
		got, err := s.memberReplicas(ns, "web", "cluster1")
		if err != nil {
			return err
		}
		got2, err := s.memberReplicas(ns, "my-app", "cluster1")
		if err != nil {
			return err
		}
		if got["cluster1"] != -1 || got2["cluster1"] != -1 {
			return fmt.Errorf("cluster1 still holds web=%d my-app=%d", got["cluster1"], got2["cluster1"])
		}
		return nil
	})
	// healthd has seen cluster1 Ready again by now or soon; give the
	// scheduler time to (wrongly) move anything back, then check it did not.
	eventually(t, 60*time.Second, "cluster1 Ready again", func() error {
		out := s.mustCLI("get", "clusters")
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "cluster1 ") && strings.Contains(l, "True") {
				return nil
			}
		}
		return fmt.Errorf("%s", out)
	})
	time.Sleep(5 * time.Second)
	eventually(t, 60*time.Second, "my-app-settings purged from cluster1", func() error {
		_, err := s.member("cluster1").CoreV1().ConfigMaps(ns).Get(context.Background(), "my-app-settings", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("cluster1 still holds it (%v)", err)
		}
		return nil
	})
	for name, want := range map[string]string{"web": "cluster2=3,cluster3=3", "my-app": "cluster2=" + fmt.Sprint(myAppReplicas)} {
		p, err := s.latestPlacement(ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := events.FormatTargets(p.Clusters); got != want {
			t.Fatalf("%s moved back after cluster1 recovered: %s, want %s", name, got, want)
		}
	}
	expectMembers(s, "web still 3/3 with nothing in cluster1", ns, "web", map[string]int32{"cluster1": -1, "cluster2": 3, "cluster3": 3})

	// The history is on the bus.
	out := s.mustCLI("replay", "--since", "10m", "--subject", "flotilla.failover.>", "--wide")
	if !strings.Contains(out, "evicted from cluster1") || !strings.Contains(out, "cluster1=2,cluster2=2,cluster3=2 -> cluster2=3,cluster3=3") || !strings.Contains(out, "released for deletion") {
		t.Fatalf("flotilla replay must show the moves:\n%s", out)
	}

	// flotilla reschedule moves web back, once cluster1 runs pods again (its
	// controller manager restarts with it; a copy that cannot start within
	// the 10 s toleration would rightly be failed over again).
	s.canaryRuns("cluster1", ns)
	s.mustCLI("reschedule", "deployment/web", "-n", ns)
	expectMembers(s, "web back at 2/2/2 after flotilla reschedule", ns, "web", map[string]int32{"cluster1": 2, "cluster2": 2, "cluster3": 2})
}

// TestApplicationFailoverMovesAWorkloadThatCannotBecomeReady: in cluster1 an
// override gives the pods a nodeSelector no node has, so they never run.
// "stuck" (application failover, interpreter's verdict) and "nginx-web"
// (seed 002's PodUnavailable > 30% rule, nested under placement as the
// article writes it) both leave cluster1, and their copies there are purged
// once the replacement is healthy.
func TestApplicationFailoverMovesAWorkloadThatCannotBecomeReady(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	s.joinAll()
	ns := uniqueNS("appfailover")
	t.Cleanup(func() { s.deleteNamespace(ns) })
	deployment := func(name string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s, labels: {failover-test: "yes"}}
spec:
  replicas: 6
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec: {containers: [{name: c, image: nginx:1.25.3, resources: {requests: {cpu: 100m}}}]}
`, ns, name)
	}
	s.applyYAML("app-failover.yaml", deployment("stuck")+"---\n"+deployment("nginx-web")+fmt.Sprintf(`---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: unschedulable-in-cluster1, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {failover-test: "yes"}}}]
  overrideRules:
  - targetCluster: {clusterNames: [cluster1]}
    overriders:
      plaintext:
      - {path: /spec/template/spec/nodeSelector, operator: add, value: {flotilla.io/no-such-node: "true"}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: stuck, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: stuck}]
  propagateDeps: true
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2, cluster3]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
  failover:
    application:
      decisionConditions: {tolerationSeconds: 10}
      purgeMode: Gracefully
      gracePeriodSeconds: 120
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-failover, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: nginx-web}]
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2, cluster3]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
    failover:
      application:
        decisionConditions: {tolerationSeconds: 10}
      applicationFailureDetection:
      - rule: "PodUnavailable > 30%%"
      clusterFailureDetection:
      - rule: "API-Server-Timeout > 3min"
`, ns))
	for _, name := range []string{"stuck", "nginx-web"} {
		expectMembers(s, name+" at 3/3 on cluster2 and cluster3, gone from cluster1", ns, name, map[string]int32{"cluster1": -1, "cluster2": 3, "cluster3": 3})
		p, err := s.latestPlacement(ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Evictions) != 1 || p.Evictions[0].Cluster != "cluster1" || p.Evictions[0].Reason != events.EvictApplicationFailure || p.Evictions[0].Kept() {
			t.Fatalf("%s: want cluster1 evicted for ApplicationFailure and purged: %+v", name, p.Evictions)
		}
		if name == "nginx-web" && !strings.Contains(p.Evictions[0].Message, "PodUnavailable > 30%") {
			t.Fatalf("nginx-web's eviction must name the seed 002 rule: %s", p.Evictions[0].Message)
		}
		t.Logf("%s: %s", name, p.Evictions[0].Message)
	}
}

// canaryRuns waits until a Deployment created directly in the member has a
// pod available: the member's controllers and scheduler work again.
func (s *system) canaryRuns(cluster, ns string) {
	s.t.Helper()
	ctx := context.Background()
	cs := s.member(cluster)
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "canary", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "canary"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "canary"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}},
	}
	eventually(s.t, 90*time.Second, "a canary Deployment to run in "+cluster, func() error {
		got, err := cs.AppsV1().Deployments(ns).Get(ctx, "canary", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			_, err = cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
			return fmt.Errorf("created: %v", err)
		}
		if err != nil {
			return err
		}
		if got.Status.AvailableReplicas < 1 {
			return fmt.Errorf("not available yet")
		}
		return nil
	})
	_ = cs.AppsV1().Deployments(ns).Delete(ctx, "canary", metav1.DeleteOptions{})
}

// dividedWithFailover is a 6-replica Deployment divided over cluster1..3
// (2/2/2) by a policy with application failover.
func dividedWithFailover(ns, name string, tolerationSeconds int, purgeMode string, gracePeriodSeconds int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: 6
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec: {containers: [{name: c, image: nginx:1.25.3, resources: {requests: {cpu: 100m}}}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s}]
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2, cluster3]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
  failover:
    application:
      decisionConditions: {tolerationSeconds: %[3]d}
      purgeMode: %[4]s
      gracePeriodSeconds: %[5]d
`, ns, name, tolerationSeconds, purgeMode, gracePeriodSeconds)
}
