package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// TestKilledSchedulerdAndExecutordLoseNothingAndRepeatNothing kills
// schedulerd and executord (SIGKILL, separate processes) while templates
// stream in, restarts them, and checks that every placement lands, that the
// placement stream holds one placement per template generation, and that
// executord applied each template once per cluster across both lifetimes.
func TestKilledSchedulerdAndExecutordLoseNothingAndRepeatNothing(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	s.joinAll()
	ns := fmt.Sprintf("restart-%d", time.Now().Unix())
	t.Cleanup(func() { s.deleteNamespace(ns) })
	const perBatch = 15
	policy := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: restart, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2, cluster3]}
`, ns)
	batch := func(from int) string {
		var b strings.Builder
		for i := from; i < from+perBatch; i++ {
			fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d-%02d, namespace: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: d-%02d}}
  template:
    metadata: {labels: {app: d-%02d}}
    spec: {containers: [{name: c, image: nginx:1.25.3}]}
`, i, ns, i, i)
		}
		return b.String()
	}
	write := func(name, content string) string {
		p := filepath.Join(s.dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	bus, err := natsbus.Connect(ctx, s.natsURL, natsbus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	placed := func() (int, error) {
		ms, err := bus.Replay(ctx, events.StreamPlacement, natsbus.ReplayOptions{Subjects: []string{"flotilla.placement." + ns + ".>"}})
		return len(ms), err
	}
	s.mustCLI("apply", "-f", write("policy.yaml", policy))
	s.mustCLI("apply", "-f", write("a.yaml", batch(0)))
	// Mid-stream: once schedulerd has placed the first of batch A (so that
	// executord has something to apply while schedulerd is down).
	eventually(t, 60*time.Second, "a first placement of batch A", func() error {
		if n, err := placed(); err != nil || n == 0 {
			return fmt.Errorf("%d placements (%v)", n, err)
		}
		return nil
	})
	s.kill("schedulerd")
	s.mustCLI("apply", "-f", write("b.yaml", batch(perBatch)))
	eventually(t, 60*time.Second, "executord to start applying", func() error {
		if n, _ := countApplies(t, s, ns); len(n) == 0 {
			return fmt.Errorf("no applies yet")
		}
		return nil
	})
	s.kill("executord") // mid-stream
	s.start("schedulerd")
	time.Sleep(2 * time.Second)
	s.start("executord")

	for _, m := range members {
		cs := s.member(m)
		eventually(t, 120*time.Second, "all deployments in "+m, func() error {
			l, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(l.Items) != 2*perBatch {
				return fmt.Errorf("%d of %d", len(l.Items), 2*perBatch)
			}
			return nil
		})
	}
	// One placement per template generation.
	ms, err := bus.Replay(ctx, events.StreamPlacement, natsbus.ReplayOptions{Subjects: []string{"flotilla.placement." + ns + ".>"}})
	if err != nil {
		t.Fatal(err)
	}
	perSubject := map[string]int{}
	for _, m := range ms {
		perSubject[m.Subject]++
	}
	if len(perSubject) != 2*perBatch {
		t.Errorf("placements for %d templates, want %d", len(perSubject), 2*perBatch)
	}
	for subj, n := range perSubject {
		if n != 1 {
			t.Errorf("%s: %d placements for one template generation", subj, n)
		}
	}
	// One apply per cluster and template generation, across both executord lifetimes.
	time.Sleep(3 * time.Second) // a resync period: a repeated apply would show up now
	applies, inFlight := countApplies(t, s, ns)
	if len(applies) != 2*perBatch*len(members) {
		t.Errorf("applied %d (cluster, template) pairs, want %d", len(applies), 2*perBatch*len(members))
	}
	for k, n := range applies {
		// An apply in flight when executord was killed (at most one per cluster:
		// each cluster has its own worker) may not have reached the member; the
		// restarted executord then applies it once more.
		if n != 1 && !(inFlight[k] && n == 2) {
			t.Errorf("%s applied %d times", k, n)
		}
	}
}

var applyingLine = regexp.MustCompile(`applying\s+\{"cluster": "([^"]+)", "workload": "([^"]+)"`)

// countApplies reads executord's log (appended across restarts; executord logs
// each apply before sending it) and counts applies per cluster and template
// of namespace ns. It also returns the last apply of each cluster in the
// first lifetime: the ones in flight when executord was killed.
func countApplies(t *testing.T, s *system, ns string) (map[string]int, map[string]bool) {
	b, err := os.ReadFile(filepath.Join(s.dir, "executord.log"))
	if err != nil {
		t.Fatal(err)
	}
	lifetimes := strings.SplitN(string(b), "executord ready", 3)
	out, last := map[string]int{}, map[string]string{}
	for i, part := range lifetimes {
		for _, m := range applyingLine.FindAllStringSubmatch(part, -1) {
			if strings.HasPrefix(m[2], ns+"/") {
				out[m[1]+" "+m[2]]++
				if i == 1 {
					last[m[1]] = m[1] + " " + m[2]
				}
			}
		}
	}
	inFlight := map[string]bool{}
	for _, k := range last {
		inFlight[k] = true
	}
	return out, inFlight
}
