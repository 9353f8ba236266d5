package e2e

import (
	"context"
	"encoding/json"
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

// instanceLease is the lease the test's schedulerd instances run with.
const instanceLease = 3 * time.Second

// owned reads `flotilla get instances -o json`: what each instance of
// daemon owns (partitions p<N>, or member clusters).
func owned(s *system, daemon string) map[string][]string {
	s.t.Helper()
	var list struct {
		Items []struct {
			Status struct {
				Daemon   string   `json:"daemon"`
				Instance string   `json:"instance"`
				Owns     []string `json:"owns"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(s.mustCLI("get", "instances", "-o", "json")), &list); err != nil {
		s.t.Fatal(err)
	}
	out := map[string][]string{}
	for _, it := range list.Items {
		if it.Status.Daemon == daemon {
			out[it.Status.Instance] = it.Status.Owns
		}
	}
	return out
}

// partitionsOwned is how many partitions each schedulerd instance owns.
func partitionsOwned(s *system) map[string]int {
	out := map[string]int{}
	for in, owns := range owned(s, "schedulerd") {
		out[in] = len(owns)
	}
	return out
}

// waitInstanceReady waits until the instance started as name (its daemon
// before the first '-') has logged that it is ready.
func waitInstanceReady(s *system, name string) {
	s.t.Helper()
	ready := strings.SplitN(name, "-", 2)[0] + " ready"
	eventually(s.t, 60*time.Second, name+" ready", func() error {
		b, _ := os.ReadFile(filepath.Join(s.dir, name+".log"))
		if !strings.Contains(string(b), ready) {
			return fmt.Errorf("not yet")
		}
		return nil
	})
}

// TestASecondSchedulerdTakesHalfThePartitionsAndAllWhenTheFirstIsKilled
// runs schedulerd-a alone, starts schedulerd-b beside it, then SIGKILLs
// schedulerd-a. b holds half the 16 partitions within about a lease of
// being ready and all of them within about a lease of a's death; templates
// applied in each phase run in every member, each placed once.
func TestASecondSchedulerdTakesHalfThePartitionsAndAllWhenTheFirstIsKilled(t *testing.T) {
	s := newSystem(t)
	lease := "--lease=" + instanceLease.String()
	for _, d := range []string{"policyd", "healthd", "executord"} {
		s.start(d, lease) // whichever starts first makes the buckets, with its lease
	}
	s.start("schedulerd-a", lease)
	s.waitDaemonsReady("policyd", "healthd", "executord")
	waitInstanceReady(s, "schedulerd-a")
	s.joinAll()
	ns := fmt.Sprintf("instances-%d", time.Now().Unix())
	t.Cleanup(func() { s.deleteNamespace(ns) })
	const perBatch = 10
	applied := 0
	applyBatch := func(name string) {
		docs := deployments(ns, applied, applied+perBatch) // with the Duplicated policy "ha"
		applied += perBatch
		s.mustCLI("apply", "-f", s.write(name, docs))
		s.waitDeployments(ns, applied, 90*time.Second)
	}
	ownedWithin := func(what string, want map[string]int, d time.Duration) time.Duration {
		start := time.Now()
		eventually(t, d, what, func() error {
			if got := partitionsOwned(s); fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("owned %v, want %v", got, want)
			}
			return nil
		})
		return time.Since(start)
	}

	ownedWithin("schedulerd-a to own every partition", map[string]int{"schedulerd-a": 16}, 2*instanceLease)
	applyBatch("a.yaml")

	s.start("schedulerd-b", lease)
	waitInstanceReady(s, "schedulerd-b")
	took := ownedWithin("a and b to own half each", map[string]int{"schedulerd-a": 8, "schedulerd-b": 8}, 2*instanceLease)
	t.Logf("schedulerd-b owned half the partitions %s after it was ready (lease %s)", took.Round(100*time.Millisecond), instanceLease)
	applyBatch("b.yaml")

	s.kill("schedulerd-a")
	took = ownedWithin("b to own every partition", map[string]int{"schedulerd-b": 16}, 2*instanceLease+2*time.Second)
	t.Logf("schedulerd-b owned every partition %s after schedulerd-a was killed (lease %s)", took.Round(100*time.Millisecond), instanceLease)
	applyBatch("c.yaml")

	// Each template placed once: nothing decided twice across the moves.
	ctx := context.Background()
	bus, err := natsbus.Connect(ctx, s.natsURL, natsbus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	ms, err := bus.Replay(ctx, events.StreamPlacement, natsbus.ReplayOptions{Subjects: []string{"flotilla.placement." + ns + ".>"}})
	if err != nil {
		t.Fatal(err)
	}
	perSubject, by := map[string]int{}, map[string]int{}
	for _, m := range ms {
		perSubject[m.Subject]++
		by[m.Event.Source()]++
	}
	if len(perSubject) != applied {
		t.Errorf("placements for %d templates, want %d", len(perSubject), applied)
	}
	for subj, n := range perSubject {
		if n != 1 {
			t.Errorf("%s: %d placements for one template generation", subj, n)
		}
	}
	if by["/schedulerd/schedulerd-a"] == 0 || by["/schedulerd/schedulerd-b"] == 0 {
		t.Errorf("placements by instance %v: want both to have decided some", by)
	}
	for _, m := range members {
		l, err := s.member(m).AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != applied {
			t.Errorf("%s: %d deployments (%v), want %d", m, len(l.Items), err, applied)
		}
	}
}
