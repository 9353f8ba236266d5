package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// natsCluster is a three-node cluster started by deploy/nats/nats.sh (what
// make nats-cluster runs) in the test's directory, on ports of its own.
type natsCluster struct {
	t   *testing.T
	env []string
}

// startNATSCluster starts the cluster, stopped when the test ends, and
// returns it with its client URLs, comma-separated.
func (s *system) startNATSCluster() (*natsCluster, string) {
	s.t.Helper()
	dir := filepath.Join(s.dir, "nats-cluster")
	c := &natsCluster{t: s.t, env: append(os.Environ(), "NATS_DIR="+dir, "FLOTILLA_BIN="+s.bin, fmt.Sprintf("NATS_PORT_BASE=%d", freePortBase(s.t)))}
	s.t.Cleanup(func() { c.run("down") })
	c.run("up")
	urls, err := os.ReadFile(filepath.Join(dir, "urls"))
	if err != nil {
		s.t.Fatal(err)
	}
	return c, strings.TrimSpace(string(urls))
}

func (c *natsCluster) run(args ...string) {
	c.t.Helper()
	cmd := exec.Command("bash", append([]string{"../nats/nats.sh"}, args...)...)
	cmd.Env = c.env
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("nats.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// freePortBase returns a base for nats.sh whose nine ports (base+1..3,
// base+2001..3, base+4001..3) are free now, below the sandbox's 30000.
func freePortBase(t *testing.T) int {
	t.Helper()
	for range 100 {
		base := 15000 + 10*rand.IntN(1000)
		free := true
		for _, off := range []int{1, 2, 3, 2001, 2002, 2003, 4001, 4002, 4003} {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+off))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			return base
		}
	}
	t.Fatal("no free port base for the NATS cluster")
	return 0
}

// leaderOf returns the node leading stream, or an error while it has none.
func leaderOf(bus *natsbus.Bus, stream string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	st, err := bus.JetStream().Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return "", errors.New("no leader")
	}
	return info.Cluster.Leader, nil
}

// deployments is a PropagationPolicy putting every Deployment of ns on the
// three members and the Deployments name-from..name-(to-1).
func deployments(ns string, from, to int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: ha, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2, cluster3]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`, ns)
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d-%02d, namespace: %s}
spec:
  replicas: 0
  selector: {matchLabels: {app: d-%02d}}
  template:
    metadata: {labels: {app: d-%02d}}
    spec: {containers: [{name: c, image: nginx:1.25.3}]}
`, i, ns, i, i)
	}
	return b.String()
}

// TestKillingThePlacementStreamLeadersNATSNodeLosesNothing: the daemons
// run on a three-node JetStream cluster with three replicas of each
// stream. The node leading the placement stream is SIGKILLed after a first
// apply; a second apply goes through the two survivors; the node comes
// back and a third apply follows. Every template is placed and applied on
// every member, and nothing is dead-lettered.
func TestKillingThePlacementStreamLeadersNATSNodeLosesNothing(t *testing.T) {
	const batch = 15
	s := newSystem(t)
	nats, urls := s.startNATSCluster()
	s.natsURL = urls
	daemons := []string{"policyd", "schedulerd", "healthd", "executord"}
	for _, d := range daemons {
		s.start(d, "--stream-replicas", "3")
	}
	s.waitDaemonsReady(daemons...)
	s.joinAll()
	ns := uniqueNS("natsha")
	t.Cleanup(func() { s.halt(); s.deleteNamespace(ns) })
	bus, err := natsbus.Connect(context.Background(), urls, natsbus.Options{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()

	s.mustCLI("apply", "-f", s.write("ha-1.yaml", deployments(ns, 0, batch)))
	leader, err := leaderOf(bus, events.StreamPlacement)
	if err != nil {
		t.Fatal(err)
	}
	nats.run("stop", leader)
	killed := time.Now()
	eventually(t, 30*time.Second, "a new placement leader", func() error {
		l, err := leaderOf(bus, events.StreamPlacement)
		if err == nil && l == leader {
			err = fmt.Errorf("still %s", l)
		}
		return err
	})
	t.Logf("placement leader %s killed; new leader elected in %s", leader, time.Since(killed).Round(10*time.Millisecond))
	s.mustCLI("apply", "-f", s.write("ha-2.yaml", deployments(ns, 0, 2*batch)))
	nats.run("start", leader)
	s.mustCLI("apply", "-f", s.write("ha-3.yaml", deployments(ns, 0, 3*batch)))

	eventually(t, 60*time.Second, fmt.Sprintf("all %d templates placed on the three members", 3*batch), func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ps, err := bus.LatestPerSubject(ctx, events.StreamPlacement, "flotilla.placement."+ns+".>")
		if err != nil {
			return err
		}
		done := 0
		for _, m := range ps {
			var p events.PlacementDecision
			if m.Err == nil && events.Decode(m.Event, &p) == nil && p.Scheduled && len(p.Clusters) == len(members) {
				done++
			}
		}
		if done != 3*batch {
			return fmt.Errorf("%d placed", done)
		}
		return nil
	})
	s.waitDeployments(ns, 3*batch, 90*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dead, err := bus.Replay(ctx, events.StreamDeadLetter, natsbus.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range dead {
		t.Errorf("dead letter on %s: %s", m.Subject, m.Data)
	}
	s.mustCLI("delete", "-f", filepath.Join(s.dir, "ha-3.yaml"))
	s.waitDeployments(ns, 0, 90*time.Second)
}
