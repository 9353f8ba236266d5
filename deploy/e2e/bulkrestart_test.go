package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

var applyingGenLine = regexp.MustCompile(`(?m)^(\d\d:\d\d:\d\d\.\d\d\d)\s.*applying\s+\{"cluster": "([^"]+)", "workload": "([^"]+)", "generation": (\d+)`)

// applyLog is executord's apply log of one namespace, split by process lifetime.
type applyLog struct {
	// count per "cluster workload generation", across lifetimes.
	count map[string]int
	// lifetimes[i][cluster] holds the times of lifetime i's applies to cluster.
	lifetimes []map[string][]time.Time
	// lastOf[i][cluster] is the last apply of lifetime i to cluster.
	lastOf []map[string]string
}

// readApplyLog parses dir/<name>.log. A process lifetime starts at its
// "serving /metrics" line, the first thing a daemon logs (executord's
// "ready" line can follow its first catch-up applies).
func readApplyLog(t *testing.T, s *system, name, ns string) applyLog {
	b, err := os.ReadFile(filepath.Join(s.dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(b), "serving /metrics /healthz /readyz")
	out := applyLog{count: map[string]int{}}
	for _, part := range parts[1:] {
		times, last := map[string][]time.Time{}, map[string]string{}
		for _, m := range applyingGenLine.FindAllStringSubmatch(part, -1) {
			if !strings.HasPrefix(m[3], ns+"/") {
				continue
			}
			k := m[2] + " " + m[3] + " " + m[4]
			out.count[k]++
			ts, _ := time.Parse("15:04:05.000", m[1])
			times[m[2]] = append(times[m[2]], ts)
			last[m[2]] = k
		}
		out.lifetimes = append(out.lifetimes, times)
		out.lastOf = append(out.lastOf, last)
	}
	return out
}

func (l applyLog) total() int {
	n := 0
	for _, c := range l.count {
		n += c
	}
	return n
}

// rate is applies per second to cluster in lifetime i (first to last apply).
func (l applyLog) rate(i int, cluster string) (int, float64) {
	ts := l.lifetimes[i][cluster]
	if len(ts) < 2 {
		return len(ts), 0
	}
	d := ts[len(ts)-1].Sub(ts[0])
	if d < 0 {
		d += 24 * time.Hour
	}
	return len(ts), float64(len(ts)-1) / d.Seconds()
}

// TestRestartingExecutordWhileApplying500TemplatesAppliesEachOnce: 500
// Deployments duplicated over three clusters arrive in one `flotilla apply`;
// executord is SIGKILLed after about a fifth of the applies and restarted.
// Every Deployment lands everywhere, a later change to 50 of them lands as
// generation 2, and each (cluster, template, generation) is applied once,
// except at most one apply per cluster in flight at the kill.
//
// FLOTILLA_E2E_EXECUTORD_RESYNC=1h runs executord with that resync interval
// instead of system.start's 2s.
func TestRestartingExecutordWhileApplying500TemplatesAppliesEachOnce(t *testing.T) {
	const n, changed = 500, 50
	s := newSystem(t)
	if r := os.Getenv("FLOTILLA_E2E_EXECUTORD_RESYNC"); r != "" {
		for _, d := range []string{"policyd", "schedulerd", "healthd"} {
			s.start(d)
		}
		s.startLast("executord", "--resync-interval", r)
	} else {
		s.startAll()
	}
	s.joinAll()
	ns := uniqueNS("bulk")
	t.Cleanup(func() { s.halt(); s.deleteNamespace(ns) })
	doc := func(newImage int) string {
		var b strings.Builder
		fmt.Fprintf(&b, `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: bulk, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2, cluster3]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`, ns)
		for i := 0; i < n; i++ {
			image := "nginx:1.25.3"
			if i < newImage {
				image = "nginx:1.27.0"
			}
			fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d-%03d, namespace: %s}
spec:
  replicas: 0
  selector: {matchLabels: {app: d-%03d}}
  template:
    metadata: {labels: {app: d-%03d}}
    spec: {containers: [{name: c, image: %s}]}
`, i, ns, i, i, image)
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
	first, second := write("bulk-1.yaml", doc(0)), write("bulk-2.yaml", doc(changed))
	if os.Getenv("FLOTILLA_E2E_DEBUG") != "" {
		s.debugConsumers(t)
	}

	start := time.Now()
	s.mustCLI("apply", "-f", first)
	applied := time.Since(start)
	killAt := n * len(members) / 5
	eventually(t, 120*time.Second, fmt.Sprintf("%d applies before the kill", killAt), func() error {
		if got := readApplyLog(t, s, "executord", ns).total(); got < killAt {
			return fmt.Errorf("%d applies", got)
		}
		return nil
	})
	killed := time.Since(start)
	s.kill("executord")
	atKill := readApplyLog(t, s, "executord", ns).total()
	if r := os.Getenv("FLOTILLA_E2E_EXECUTORD_RESYNC"); r != "" {
		s.startLast("executord", "--resync-interval", r)
	} else {
		s.start("executord")
	}

	ctx := context.Background()
	s.waitDeployments(ns, n, 240*time.Second)
	allThere := time.Since(start)
	log1 := readApplyLog(t, s, "executord", ns)

	// A change to 50 templates: generation 2 lands, the other 450 stay put.
	start2 := time.Now()
	s.mustCLI("apply", "-f", second)
	for _, m := range members {
		cs := s.member(m)
		eventually(t, 120*time.Second, "every deployment in its final form in "+m, func() error {
			l, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(l.Items) != n {
				return fmt.Errorf("%d of %d", len(l.Items), n)
			}
			var wrong []string
			for _, d := range l.Items {
				i, _ := strconv.Atoi(strings.TrimPrefix(d.Name, "d-"))
				image, gen := "nginx:1.25.3", int64(1)
				if i < changed {
					image, gen = "nginx:1.27.0", 2
				}
				c := d.Spec.Template.Spec.Containers
				if len(c) != 1 || c[0].Image != image || d.Generation != gen || d.Spec.Replicas == nil || *d.Spec.Replicas != 0 || d.Labels["flotilla.io/managed"] != "true" {
					wrong = append(wrong, fmt.Sprintf("%s(image %s, generation %d)", d.Name, c[0].Image, d.Generation))
				}
			}
			if len(wrong) > 0 {
				sort.Strings(wrong)
				return fmt.Errorf("%d not in final form, e.g. %s", len(wrong), wrong[0])
			}
			return nil
		})
	}
	updated := time.Since(start2)

	time.Sleep(3 * time.Second) // a resync period: a repeated apply would show up now
	log2 := readApplyLog(t, s, "executord", ns)
	if len(log2.lifetimes) != 2 {
		t.Fatalf("%d executord lifetimes in the log, want 2", len(log2.lifetimes))
	}
	inFlight := map[string]bool{}
	for _, k := range log2.lastOf[0] {
		inFlight[k] = true
	}
	want := n*len(members) + changed*len(members)
	if len(log2.count) != want {
		t.Errorf("applied %d (cluster, template, generation) triples, want %d", len(log2.count), want)
	}
	var repeated []string
	for k, c := range log2.count {
		if c != 1 && !(inFlight[k] && c == 2) {
			repeated = append(repeated, fmt.Sprintf("%s applied %d times", k, c))
		}
	}
	sort.Strings(repeated)
	for i, r := range repeated {
		if i == 10 {
			t.Errorf("... and %d more", len(repeated)-10)
			break
		}
		t.Error(r)
	}
	doubles := 0
	for k := range inFlight {
		if log2.count[k] == 2 {
			doubles++
		}
	}

	t.Logf("apply -f of %d templates returned in %s; kill after %s with %d of %d applies logged; all %d in all 3 clusters after %s; 50 changed everywhere %s after the second apply",
		n, applied.Round(10*time.Millisecond), killed.Round(10*time.Millisecond), atKill, n*len(members), n, allThere.Round(10*time.Millisecond), updated.Round(10*time.Millisecond))
	t.Logf("in-flight applies repeated after the restart: %d (allowed: up to one per cluster)", doubles)
	for i := range log1.lifetimes {
		for _, m := range members {
			c, r := log1.rate(i, m)
			t.Logf("lifetime %d, %s: %d applies, %.1f applies/s", i+1, m, c, r)
		}
	}
	total := 0
	for _, m := range members {
		total += len(log1.lifetimes[0][m]) + len(log1.lifetimes[1][m])
	}
	t.Logf("overall (first apply -f to all present): %.1f applies/s per cluster, %.1f applies/s in total",
		float64(total)/float64(len(members))/allThere.Seconds(), float64(total)/allThere.Seconds())
}

// debugConsumers logs executord's cluster consumers every 5 s and keeps the
// daemon logs in /tmp/flotilla-e2e-<test> (FLOTILLA_E2E_DEBUG=1).
func (s *system) debugConsumers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	bus, err := natsbus.Connect(ctx, s.natsURL, natsbus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(os.TempDir(), "flotilla-e2e-"+t.Name())
	t.Cleanup(func() {
		cancel()
		bus.Close()
		_ = os.RemoveAll(keep)
		_ = os.MkdirAll(keep, 0o755)
		logs, _ := filepath.Glob(filepath.Join(s.dir, "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			_ = os.WriteFile(filepath.Join(keep, filepath.Base(l)), b, 0o644)
		}
		t.Logf("logs kept in %s", keep)
	})
	go func() {
		tk := time.NewTicker(5 * time.Second)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			var parts []string
			for _, m := range members {
				c, err := bus.JetStream().Consumer(ctx, events.StreamPlacement, "executord-"+m)
				if err != nil {
					parts = append(parts, m+": "+err.Error())
					continue
				}
				i, err := c.Info(ctx)
				if err != nil {
					parts = append(parts, m+": "+err.Error())
					continue
				}
				parts = append(parts, fmt.Sprintf("%s pending=%d ackPending=%d redelivered=%d waiting=%d ackFloor=%d delivered=%d",
					m, i.NumPending, i.NumAckPending, i.NumRedelivered, i.NumWaiting, i.AckFloor.Stream, i.Delivered.Stream))
			}
			t.Logf("%s consumers: %s", time.Now().Format("15:04:05"), strings.Join(parts, "; "))
		}
	}()
}

// startLast is start with extra flags after the ones start adds (the last wins).
func (s *system) startLast(name string, extra ...string) {
	daemon := strings.SplitN(name, "-", 2)[0]
	full := []string{daemon, "--nats-url", s.natsURL, "--metrics-addr", "127.0.0.1:0", "--log-format", "console", "--instance", name, "--credentials-key", filepath.Join(s.dir, "credentials.key")}
	full = append(full, extra...)
	s.process(name, full...)
}
