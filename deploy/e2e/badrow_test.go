package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// TestGarbageOnAPlacementSubjectLeavesGetAndTheDaemonsUnaffected publishes
// garbage on the placement subject of a placed template: get placements
// and get work show what they showed before (with a warning naming the
// unreadable row), the daemons keep placing new templates, also after a
// restart, and the garbage is dead-lettered exactly once although every
// cluster's consumer meets it.
func TestGarbageOnAPlacementSubjectLeavesGetAndTheDaemonsUnaffected(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	s.joinAll()
	ns := fmt.Sprintf("badrow-%d", time.Now().Unix())
	t.Cleanup(func() { s.deleteNamespace(ns) })
	deployment := func(name string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec: {containers: [{name: c, image: nginx:1.25.3}]}
`, name, ns, name, name)
	}
	s.mustCLI("apply", "-f", s.write("policy.yaml", fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: badrow, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2]}
`, ns)))
	s.mustCLI("apply", "-f", s.write("a.yaml", deployment("a")))
	phases := func() (string, error) {
		items, err := s.workItemsIn(ns)
		if err != nil {
			return "", err
		}
		var ps []string
		for _, w := range items {
			ps = append(ps, w.Key.Name+"/"+w.Cluster+"="+w.Phase)
		}
		return strings.Join(ps, " "), nil
	}
	const running = "a/cluster1=Running a/cluster2=Running"
	eventually(t, 90*time.Second, "a running in cluster1 and cluster2", func() error {
		if got, err := phases(); err != nil || got != running {
			return fmt.Errorf("%q (%v)", got, err)
		}
		return nil
	})
	// The placements table without its AGE column (the last).
	withoutAge := func(table string) string {
		var rows []string
		for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
			f := strings.Fields(line)
			rows = append(rows, strings.Join(f[:len(f)-1], " "))
		}
		return strings.Join(rows, "\n")
	}
	placements := withoutAge(s.mustCLI("get", "placements", "-n", ns))

	ctx := context.Background()
	bus, err := natsbus.Connect(ctx, s.natsURL, natsbus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	subject := events.PlacementSubject(events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "a"})
	if err := bus.PublishRaw(ctx, subject, nil, []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	deadLetters := func() ([]events.DeadLetter, error) {
		return s.deadLettersOnBus()
	}
	oneDeadLetter := func() error {
		dls, err := deadLetters()
		if err != nil {
			return err
		}
		if len(dls) != 1 || dls[0].Subject != subject || dls[0].Stream != events.StreamPlacement {
			return fmt.Errorf("dead letters: %+v", dls)
		}
		return nil
	}
	eventually(t, 30*time.Second, "the garbage dead-lettered", oneDeadLetter)

	unaffected := func(when string) {
		t.Helper()
		out, stderr, code := s.cli("get", "placements", "-n", ns)
		if code != 0 || withoutAge(out) != placements {
			t.Errorf("%s: get placements, exit %d:\n%s\nwant:\n%s", when, code, out, placements)
		}
		if !strings.Contains(stderr, "Warning: "+subject+": FLOTILLA_PLACEMENT sequence ") || !strings.Contains(stderr, "is unreadable") {
			t.Errorf("%s: get placements warns on stderr about the unreadable row: %q", when, stderr)
		}
		if got, err := phases(); err != nil || !strings.HasPrefix(got, running) {
			t.Errorf("%s: get work: %q (%v), want a still %q", when, got, err, running)
		}
	}
	unaffected("after the garbage")

	// The daemons still place new templates, also once restarted (their
	// catch-up reads the garbage's subject again).
	placedB := func(what string) {
		t.Helper()
		eventually(t, 90*time.Second, what, func() error {
			_, err := s.member("cluster1").AppsV1().Deployments(ns).Get(ctx, "b", metav1.GetOptions{})
			return err
		})
	}
	s.mustCLI("apply", "-f", s.write("b.yaml", deployment("b")))
	placedB("b in cluster1")
	for _, d := range []string{"schedulerd", "executord"} {
		s.kill(d)
		s.start(d)
	}
	s.waitDaemonsReady("schedulerd", "executord")
	s.mustCLI("delete", "deployment/b", "-n", ns)
	eventually(t, 90*time.Second, "b deleted from cluster1 by the restarted daemons", func() error {
		if _, err := s.member("cluster1").AppsV1().Deployments(ns).Get(ctx, "b", metav1.GetOptions{}); err == nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
	unaffected("after a restart")
	if err := oneDeadLetter(); err != nil {
		t.Errorf("after a restart: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(s.dir, "schedulerd.log"))
	if !strings.Contains(string(b), "unreadable latest row passed over") {
		t.Errorf("the restarted schedulerd does not log the unreadable row it passed over")
	}
}
