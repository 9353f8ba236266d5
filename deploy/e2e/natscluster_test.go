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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// natsCluster is a three-node cluster started by deploy/nats/nats.sh (what
// make nats-cluster runs) in the test's directory, on ports of its own.
type natsCluster struct {
	t   *testing.T
	dir string
	env []string
}

// startNATSCluster starts the cluster, stopped when the test ends (a node
// still frozen is woken first), and returns it with its client URLs,
// comma-separated. Its ports are one of slots 30-port slots from lo. It
// runs with authentication, as make nats-cluster does: nats.sh registers
// its admin credentials for its URLs in the test's own config directory,
// where the daemons and the CLI find them. env is added to nats.sh's
// environment (NATS_TLS=1: TLS on clients and routes).
func (s *system) startNATSCluster(lo, slots int, env ...string) (*natsCluster, string) {
	s.t.Helper()
	if config := filepath.Join(s.dir, "config"); os.Getenv("XDG_CONFIG_HOME") != config {
		s.t.Setenv("XDG_CONFIG_HOME", config)
	}
	dir := filepath.Join(s.dir, "nats-cluster")
	c := &natsCluster{t: s.t, dir: dir, env: append(os.Environ(), "NATS_DIR="+dir, "FLOTILLA_BIN="+s.bin, fmt.Sprintf("NATS_PORT_BASE=%d", freePortBase(s.t, lo, slots)))}
	c.env = append(c.env, env...)
	s.t.Cleanup(func() {
		for _, n := range []string{"n1", "n2", "n3"} {
			c.signal(n, syscall.SIGCONT)
		}
		c.run("down")
	})
	c.run("up")
	urls, err := os.ReadFile(filepath.Join(dir, "urls"))
	if err != nil {
		s.t.Fatal(err)
	}
	return c, strings.TrimSpace(string(urls))
}

// adminCreds is the admin credentials file nats.sh wrote.
func (c *natsCluster) adminCreds() string { return filepath.Join(c.dir, "creds", "admin.creds") }

// authDir is the authority the nodes trust.
func (c *natsCluster) authDir() string { return filepath.Join(c.dir, "auth") }

// signal sends sig to a running node (SIGSTOP freezes it: its sockets stay
// open and nobody answers, unlike a kill; SIGCONT wakes it).
func (c *natsCluster) signal(node string, sig syscall.Signal) {
	b, err := os.ReadFile(filepath.Join(c.dir, node+".pid"))
	if err != nil {
		return // not running
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		c.t.Errorf("%s.pid: %v", node, err)
		return
	}
	if err := syscall.Kill(pid, sig); err != nil {
		c.t.Errorf("signal %s to %s (pid %d): %v", sig, node, pid, err)
	}
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
// base+11..13, base+21..23) are free now: one of slots 30-port slots from
// lo. Each test has its own range (14300-14989, 15000-15499, 15500-15979), clear of make
// nats-cluster's 14221-14243, of NATS's 4222 and of the sandbox's 30000
// and up.
func freePortBase(t *testing.T, lo, slots int) int {
	t.Helper()
	for range 100 {
		base := lo + 30*rand.IntN(slots)
		free := true
		for _, off := range []int{1, 2, 3, 11, 12, 13, 21, 22, 23} {
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

// removeNamespace deletes ns from every member and waits until it is gone,
// its Deployments with it, so that a failed run leaves nothing behind for
// the tests after it. For t.Cleanup: it reports a leak with Errorf.
func (s *system) removeNamespace(ns string) {
	s.deleteNamespace(ns)
	deadline := time.Now().Add(90 * time.Second)
	for _, m := range members {
		cs := s.member(m)
		for {
			_, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				s.t.Errorf("namespace %s still in %s after the test: %v", ns, m, err)
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// newLeader waits until stream has a leader other than old.
func newLeader(t *testing.T, bus *natsbus.Bus, stream, old string) string {
	t.Helper()
	var l string
	eventually(t, 60*time.Second, "a new "+stream+" leader", func() error {
		var err error
		if l, err = leaderOf(bus, stream); err == nil && l == old {
			err = fmt.Errorf("still %s", l)
		}
		return err
	})
	return l
}

// waitRejoined waits until node, restarted, is a current replica (or the
// leader) of every stream, the buckets' included. Freezing another node
// before then leaves each stream it has not caught up on without a
// quorum until the freeze ends: two faults at once, not one after the
// other (seen as 46 s without a lease write in this test's first runs).
func waitRejoined(t *testing.T, bus *natsbus.Bus, node string) {
	t.Helper()
	began := time.Now()
	eventually(t, 60*time.Second, node+" a current replica of every stream", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		names := bus.JetStream().StreamNames(ctx)
		for name := range names.Name() {
			st, err := bus.JetStream().Stream(ctx, name)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			c := st.CachedInfo().Cluster
			if c == nil || c.Leader == node {
				continue
			}
			peer, current := false, false
			for _, r := range c.Replicas {
				peer = peer || r.Name == node
				current = current || (r.Name == node && r.Current && !r.Offline)
			}
			if peer && !current {
				return fmt.Errorf("%s: %s not current", name, node)
			}
		}
		return names.Err()
	})
	t.Logf("%s current in every stream %s after its restart", node, time.Since(began).Round(10*time.Millisecond))
}

// TestKillingAndFreezingThePlacementStreamLeadersNATSNodeLosesNothing: the
// daemons run on a three-node JetStream cluster with three replicas of
// each stream. After a first apply, the node leading the placement stream
// is SIGKILLed, a second apply goes through the two survivors, and the
// node comes back. Then the node leading it now is frozen with SIGSTOP
// for 30 s (its connections stay open and silent: clients must notice by
// themselves), a third apply goes through the others, and a fourth
// follows the SIGCONT. Every template is placed and applied on every
// member, and nothing is dead-lettered.
func TestKillingAndFreezingThePlacementStreamLeadersNATSNodeLosesNothing(t *testing.T) {
	const batch, frozen = 10, 30 * time.Second
	s := newSystem(t)
	nats, urls := s.startNATSCluster(14300, 23)
	s.natsURL = urls
	ns := uniqueNS("natsha")
	t.Cleanup(func() { s.halt(); s.removeNamespace(ns) }) // runs before the cluster stops
	daemons := []string{"policyd", "schedulerd", "healthd", "executord"}
	for _, d := range daemons {
		s.start(d, "--stream-replicas", "3")
	}
	s.waitDaemonsReady(daemons...)
	s.joinAll()
	bus, err := natsbus.Connect(context.Background(), urls, natsbus.Options{Name: t.Name(), Credentials: nats.adminCreds()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	// Each apply waits up to a minute for policyd's confirmation. The one
	// made while a node is frozen takes longest when policyd's connection
	// was to that node: it is found stale 9-12 s into the freeze (about
	// when this apply starts), then its leases are renewed and the
	// partitions republished. 0.26-5.6 s here since lease
	// rounds are bounded (DESIGN.md §7); 8-68 s before, past the minute in
	// two CI runs.
	apply := func(n int, timeout string) {
		t.Helper()
		began := time.Now()
		out, errs, code := s.cli("apply", "--timeout", timeout, "-f", s.write(fmt.Sprintf("ha-%d.yaml", n), deployments(ns, 0, n*batch)))
		if code != 0 {
			t.Fatalf("apply %d: exit %d\nstdout: %s\nstderr: %s", n, code, out, errs)
		}
		t.Logf("apply %d confirmed in %s%s", n, time.Since(began).Round(10*time.Millisecond), errs)
	}

	apply(1, "1m")
	leader, err := leaderOf(bus, events.StreamPlacement)
	if err != nil {
		t.Fatal(err)
	}
	nats.run("stop", leader)
	killed := time.Now()
	l := newLeader(t, bus, events.StreamPlacement, leader)
	t.Logf("placement leader %s killed; %s elected in %s", leader, l, time.Since(killed).Round(10*time.Millisecond))
	apply(2, "1m")
	nats.run("start", leader)
	waitRejoined(t, bus, leader)

	leader = l
	nats.signal(leader, syscall.SIGSTOP)
	froze := time.Now()
	l = newLeader(t, bus, events.StreamPlacement, leader)
	t.Logf("placement leader %s frozen; %s elected in %s", leader, l, time.Since(froze).Round(10*time.Millisecond))
	apply(3, "1m")
	time.Sleep(time.Until(froze.Add(frozen)))
	nats.signal(leader, syscall.SIGCONT)
	apply(4, "1m")

	eventually(t, 60*time.Second, fmt.Sprintf("all %d templates placed on the three members", 4*batch), func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ps, err := bus.LatestPerSubject(ctx, events.StreamPlacement, "flotilla.placement."+ns+".>")
		if err != nil {
			return err
		}
		done, seen, others := 0, map[string]bool{}, []string{}
		for _, m := range ps {
			var p events.PlacementDecision
			if m.Err != nil || events.Decode(m.Event, &p) != nil {
				others = append(others, m.Subject+": unreadable")
				continue
			}
			seen[p.Key.Name] = true
			if p.Scheduled && len(p.Clusters) == len(members) {
				done++
			} else {
				others = append(others, fmt.Sprintf("%s: %s %q (revision %d)", p.Key.Name, events.FormatTargets(p.Clusters), p.Error, p.BindingRevision))
			}
		}
		for i := range 4 * batch {
			if name := fmt.Sprintf("d-%02d", i); !seen[name] {
				others = append(others, name+": no placement")
			}
		}
		if done != 4*batch {
			return fmt.Errorf("%d placed; %s", done, strings.Join(others, "; "))
		}
		return nil
	})
	s.waitDeployments(ns, 4*batch, 90*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dead, err := bus.Replay(ctx, events.StreamDeadLetter, natsbus.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range dead {
		t.Errorf("dead letter on %s: %s", m.Subject, m.Data)
	}
	s.mustCLI("delete", "-f", filepath.Join(s.dir, "ha-4.yaml"))
	s.waitDeployments(ns, 0, 90*time.Second)
}
