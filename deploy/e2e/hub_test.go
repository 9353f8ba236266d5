package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hub is the API-only sandbox cluster kubectl talks to (make hub).
type hub struct {
	s          *system
	kubeconfig string
}

// newHub returns the sandbox hub with Flotilla's CRDs installed and no
// objects left in namespace default by an earlier run.
func newHub(s *system) *hub {
	s.t.Helper()
	kc := filepath.Join(s.sandbox, "hub.kubeconfig")
	if _, err := os.Stat(kc); err != nil {
		s.t.Fatalf("no hub in the sandbox (%v): make hub starts it", err)
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		s.t.Fatalf("kubectl is required: %v", err)
	}
	h := &hub{s: s, kubeconfig: kc}
	s.mustCLI("hub", "install", "--kubeconfig", kc)
	h.kubectl("delete", "deploy,svc,configmap,pp,op,rb,events", "--all", "-n", "default", "--ignore-not-found", "--wait=false")
	h.kubectl("delete", "clusters,cpp,cop", "--all", "--ignore-not-found", "--wait=false")
	return h
}

// startWithHub starts the daemons with the sandbox members joined and
// hubd mirroring the hub (write-back every second).
func startWithHub(t *testing.T) (*system, *hub) {
	s := newSystem(t)
	h := newHub(s)
	s.startAll()
	s.joinAll()
	s.start("hubd", "--hub-kubeconfig", h.kubeconfig, "--hub-interval", "1s")
	s.waitDaemonsReady("hubd")
	return s, h
}

// kubectl runs kubectl against the hub; it returns stdout, stderr and the exit code.
func (h *hub) kubectl(args ...string) (string, string, int) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", h.kubeconfig}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.s.t.Fatalf("kubectl: %v", err)
	}
	return out.String(), errOut.String(), code
}

func (h *hub) mustKubectl(args ...string) string {
	h.s.t.Helper()
	out, errOut, code := h.kubectl(args...)
	if code != 0 {
		h.s.t.Fatalf("kubectl %s: exit %d: %s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// until waits until kubectl args prints output matching re.
func (h *hub) until(d time.Duration, re string, args ...string) string {
	h.s.t.Helper()
	var last string
	eventually(h.s.t, d, fmt.Sprintf("kubectl %s to match %q", strings.Join(args, " "), re), func() error {
		out, errOut, _ := h.kubectl(args...)
		last = out
		if !regexp.MustCompile(re).MatchString(out) {
			return fmt.Errorf("%s%s", out, errOut)
		}
		return nil
	})
	return last
}

// deleteNamespace deletes a test namespace on the hub with what the tests
// put there. The hub runs no namespace controller, so it finalizes the
// namespace itself, as that controller would once it is empty.
func (h *hub) deleteNamespace(ns string) {
	h.kubectl("delete", "deploy,svc,configmap,pp,op,rb,events", "--all", "-n", ns, "--ignore-not-found")
	h.kubectl("delete", "namespace", ns, "--wait=false")
	out, _, code := h.kubectl("get", "namespace", ns, "-o", "json")
	if code != 0 {
		return
	}
	var obj map[string]any
	if json.Unmarshal([]byte(out), &obj) != nil {
		return
	}
	obj["spec"] = map[string]any{"finalizers": []string{}}
	finalized, _ := json.Marshal(obj)
	cmd := exec.Command("kubectl", "--kubeconfig", h.kubeconfig, "replace", "--raw", "/api/v1/namespaces/"+ns+"/finalize", "-f", "-")
	cmd.Stdin = strings.NewReader(string(finalized))
	if b, err := cmd.CombinedOutput(); err != nil {
		h.s.t.Logf("finalize namespace %s on the hub: %v: %s", ns, err, b)
	}
}

// TestHubDrivesFlotillaWithKubectl is issue 19's front door end to end:
// kubectl against an API-only hub places seed 000, reads READY, the
// binding and the clusters back, scales and deletes, also while hubd is
// down; the CRD schema refuses a misspelt field and policyd's refusal of a
// semantic error shows as a Warning Event.
func TestHubDrivesFlotillaWithKubectl(t *testing.T) {
	s := newSystem(t)
	s.cleanMembers("default", []string{"my-app"}, []string{"my-app"})
	h := newHub(s)
	s.startAll()
	s.joinAll()
	s.start("hubd", "--hub-kubeconfig", h.kubeconfig, "--hub-interval", "1s")
	s.waitDaemonsReady("hubd")

	seed := []string{"-f", filepath.Join(seed000, "my-app.yaml"), "-f", filepath.Join(seed000, "propagation-policy.yaml"), "-f", filepath.Join(seed000, "override-policy.yaml")}
	t.Cleanup(func() { h.kubectl(append([]string{"delete", "--ignore-not-found"}, seed...)...) })
	h.mustKubectl(append([]string{"apply"}, seed...)...)
	wantImage := map[string]string{"cluster1": "registry.beijing.example.com/nginx:1.25.3", "cluster2": "registry.shanghai.example.com/nginx:1.25.3", "cluster3": "nginx:1.25.3"}
	s.expectReplicas(map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1}, wantImage)
	h.until(60*time.Second, `my-app\s+6/6\s+6\s+6`, "get", "deploy", "my-app", "-n", "default")
	h.until(30*time.Second, `my-app-deployment\s+True\s+True`, "get", "rb", "-n", "default")
	h.until(30*time.Second, `my-app-service\s+True\s+True`, "get", "rb", "-n", "default")
	if out := h.mustKubectl("describe", "rb", "my-app-deployment", "-n", "default"); !strings.Contains(out, "cluster1") || !strings.Contains(out, "Binding has been scheduled successfully") {
		t.Errorf("describe rb my-app-deployment:\n%s", out)
	}
	clusters := h.until(30*time.Second, `(?s)cluster1\s+v\S+\s+Push\s+True.*cluster2\s+v\S+\s+Push\s+True.*cluster3\s+v\S+\s+Push\s+True`, "get", "clusters")
	if !strings.Contains(clusters, "VERSION") || !strings.Contains(clusters, "MODE") || !strings.Contains(clusters, "READY") {
		t.Errorf("get clusters lacks Karmada's columns:\n%s", clusters)
	}
	// The hub and flotilla get agree: the bus holds the hub's objects,
	// exactly as flotilla apply would have published the same files.
	if out := s.mustCLI("get", "pp", "-n", "default"); !strings.Contains(out, "my-app-policy") {
		t.Errorf("flotilla get pp:\n%s", out)
	}
	if out, errOut, code := s.cli(append([]string{"diff"}, seed...)...); code != 0 {
		t.Errorf("flotilla diff of the seed files against what hubd published: exit %d (want 0, no difference):\n%s%s", code, out, errOut)
	}

	if _, body := httpGet(t, s.endpoint("hubd")+"/metrics"); !strings.Contains(body, `flotilla_hub_inputs_total{outcome="published"}`) ||
		!strings.Contains(body, `flotilla_hub_writebacks_total{result="ok"}`) {
		t.Errorf("hubd /metrics lacks its input and write-back counters")
	}
	// What hubd writes back never returns as input, and a restarted hubd
	// publishes nothing for what the bus holds already.
	published := s.hubdPublished()
	if published < 3 {
		t.Fatalf("hubd's log shows %d published events, want at least the Deployment, the Service and the policies", published)
	}
	time.Sleep(3 * time.Second) // three write-back rounds
	if n := s.hubdPublished(); n != published {
		t.Errorf("hubd published %d events while nothing changed on the hub: its own writes came back as input", n-published)
	}
	s.kill("hubd")
	s.start("hubd", "--hub-kubeconfig", h.kubeconfig, "--hub-interval", "1s")
	eventually(t, 30*time.Second, "the restarted hubd ready", func() error {
		if b, _ := os.ReadFile(filepath.Join(s.dir, "hubd.log")); strings.Count(string(b), "hubd ready") < 2 {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	if n := s.hubdPublished(); n != published {
		t.Errorf("a restarted hubd published %d events for objects the bus holds already", n-published)
	}

	// What hubd wrote and the hub lost is written again: a
	// ResourceBinding deleted with kubectl, and the Cluster of a member
	// that was unjoined by deleting it on the hub and joined again with
	// flotilla join (same content as hubd wrote before).
	h.mustKubectl("delete", "rb", "my-app-deployment", "-n", "default")
	h.until(30*time.Second, `my-app-deployment\s+True\s+True`, "get", "rb", "-n", "default")
	h.mustKubectl("delete", "cluster", "cluster3")
	eventually(t, 60*time.Second, "cluster3 unjoined by its deletion on the hub", func() error {
		if out := s.mustCLI("get", "clusters"); strings.Contains(out, "cluster3") {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
	s.mustCLI("join", "cluster3", "--cluster-kubeconfig", filepath.Join(s.sandbox, "cluster3.kubeconfig"))
	h.until(30*time.Second, `cluster3\s+v\S+\s+Push\s+True`, "get", "clusters")
	// As in Karmada, a cluster that joins moves nothing back; a
	// reschedule does.
	s.mustCLI("reschedule", "deployment/my-app", "-n", "default")
	s.expectReplicas(map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1}, wantImage)

	h.mustKubectl("scale", "deploy", "my-app", "-n", "default", "--replicas=12")
	s.expectReplicas(map[string]int32{"cluster1": 6, "cluster2": 4, "cluster3": 2}, wantImage)
	h.until(60*time.Second, `my-app\s+12/12`, "get", "deploy", "my-app", "-n", "default")
	// A scale-down: the hub's status sums the members' status replicas,
	// which the API server checks ready and updated counts against; summed
	// from their specs, it refused the write while pods terminated.
	h.mustKubectl("scale", "deploy", "my-app", "-n", "default", "--replicas=6")
	s.expectReplicas(map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1}, wantImage)
	h.until(60*time.Second, `my-app\s+6/6`, "get", "deploy", "my-app", "-n", "default")
	if b, _ := os.ReadFile(filepath.Join(s.dir, "hubd.log")); strings.Contains(string(b), "cannot be greater than") {
		t.Errorf("the hub refused a status hubd wrote during the scale-down: see %s", filepath.Join(s.dir, "hubd.log"))
	}

	h.mustKubectl(append([]string{"delete"}, seed...)...)
	s.expectGone("my-app")
	h.until(30*time.Second, `^$`, "get", "rb", "-n", "default", "-o", "name")

	// A delete made while hubd is down is carried out when it starts.
	h.mustKubectl(append([]string{"apply"}, seed...)...)
	s.expectReplicas(map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1}, wantImage)
	s.kill("hubd")
	h.mustKubectl("delete", "-f", filepath.Join(seed000, "my-app.yaml"))
	s.start("hubd", "--hub-kubeconfig", h.kubeconfig, "--hub-interval", "1s")
	s.expectGone("my-app")

	// The CRD's schema refuses a misspelt field, as flotilla apply does.
	raw, err := os.ReadFile(filepath.Join(seed000, "propagation-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	misspelt := s.write("misspelt.yaml", strings.Replace(string(raw), "replicaScheduling:", "replicaSchedulng:", 1))
	if out, errOut, code := h.kubectl("apply", "-f", misspelt); code == 0 || !strings.Contains(errOut, `unknown field "spec.placement.replicaSchedulng"`) {
		t.Errorf("kubectl apply of a misspelt field: want it refused naming the field, got exit %d: %s%s", code, out, errOut)
	}
	// A semantic error passes the schema; policyd's refusal shows on the policy.
	wrong := s.write("wrong.yaml", strings.Replace(string(raw), "replicaDivisionPreference: Weighted", "replicaDivisionPreference: Sideways", 1))
	h.mustKubectl("apply", "-f", wrong)
	h.until(30*time.Second, `(?s)Warning\s+ValidationFailed.*replicaDivisionPreference`, "describe", "pp", "my-app-policy", "-n", "default")
	h.until(30*time.Second, `my-app-policy.*False`, "get", "pp", "my-app-policy", "-n", "default")
	h.mustKubectl("delete", "-f", wrong)
}

// hubdPublished counts the events hubd's log says it published, across
// its restarts.
func (s *system) hubdPublished() int {
	b, _ := os.ReadFile(filepath.Join(s.dir, "hubd.log"))
	return strings.Count(string(b), "\tpublished\t")
}

// expectGone waits until no member holds the Deployment and Service name.
func (s *system) expectGone(name string) {
	s.t.Helper()
	for _, m := range members {
		cs := s.member(m)
		eventually(s.t, 60*time.Second, name+" deleted from "+m, func() error {
			_, errD := cs.AppsV1().Deployments("default").Get(context.Background(), name, metav1.GetOptions{})
			_, errS := cs.CoreV1().Services("default").Get(context.Background(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(errD) && apierrors.IsNotFound(errS) {
				return nil
			}
			return fmt.Errorf("deployment: %v, service: %v", errD, errS)
		})
	}
}

// TestHubAggregatesJobAndPodStatus: a Job and a Pod applied to the hub and
// duplicated on cluster1 and cluster2, where the members' job controllers
// and kwok run and complete them; the hub's Job shows both members'
// succeeded pods summed and Complete, its Pod the members' phase, as
// Karmada's default interpreter aggregates them.
func TestHubAggregatesJobAndPodStatus(t *testing.T) {
	s, h := startWithHub(t)
	name := "flotilla-hub-" + uniqueNS("agg")
	file := s.write("job.yaml", fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: %[1]s, namespace: default}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox:1.36, command: ["true"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: %[1]s, namespace: default}
spec:
  containers: [{name: app, image: nginx:1.25.3}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: default}
spec:
  resourceSelectors:
  - {apiVersion: batch/v1, kind: Job, name: %[1]s}
  - {apiVersion: v1, kind: Pod, name: %[1]s}
  placement: {clusterAffinity: {clusterNames: [cluster1, cluster2]}}
`, name))
	t.Cleanup(func() {
		h.kubectl("delete", "-f", file, "--ignore-not-found", "--wait=false")
		background := metav1.DeletePropagationBackground
		for _, m := range []string{"cluster1", "cluster2"} {
			cs := s.member(m)
			_ = cs.BatchV1().Jobs("default").Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &background})
			_ = cs.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	h.mustKubectl("apply", "-f", file)
	h.until(90*time.Second, `^2 True$`, "get", "job", name, "-n", "default",
		"-o", `jsonpath={.status.succeeded} {.status.conditions[?(@.type=="Complete")].status}`)
	if out := h.mustKubectl("get", "job", name, "-n", "default", "-o", "jsonpath={.status.startTime} {.status.completionTime}"); !regexp.MustCompile(`^\S+Z \S+Z$`).MatchString(out) {
		t.Errorf("the hub's Job lacks the members' startTime and completionTime: %q", out)
	}
	h.until(60*time.Second, `^Running true true$`, "get", "pod", name, "-n", "default",
		"-o", `jsonpath={.status.phase} {.status.containerStatuses[0].ready} {.status.containerStatuses[1].ready}`)
	h.mustKubectl("delete", "-f", file)
	for _, m := range []string{"cluster1", "cluster2"} {
		cs := s.member(m)
		eventually(t, 60*time.Second, name+" gone from "+m, func() error {
			_, errJ := cs.BatchV1().Jobs("default").Get(context.Background(), name, metav1.GetOptions{})
			_, errP := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(errJ) && apierrors.IsNotFound(errP) {
				return nil
			}
			return fmt.Errorf("job: %v, pod: %v", errJ, errP)
		})
	}
}
