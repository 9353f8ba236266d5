package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// TestATemplateAboveMaxReplicasIsRefusedWhileTwentyOthersArePlaced: with
// policyd run with --max-replicas 100000, a Deployment of 2^31-1 replicas
// claimed by a Divided policy is refused with the reason (apply exits 1, an
// object.rejected event says why, nothing is placed or applied for it),
// and 20 small Deployments applied at the same time are placed 3:2:1 and
// reach the members, all within a loose 30 s (issue 12: such a template
// used to hold schedulerd for about 40 s and then flood the members).
func TestATemplateAboveMaxReplicasIsRefusedWhileTwentyOthersArePlaced(t *testing.T) {
	const small, bound = 20, 30 * time.Second
	s := newSystem(t)
	s.start("policyd", "--max-replicas", "100000")
	for _, d := range []string{"schedulerd", "healthd", "executord"} {
		s.start(d)
	}
	s.waitDaemonsReady("policyd", "schedulerd", "healthd", "executord")
	s.joinAll()
	ns := uniqueNS("guard")
	t.Cleanup(func() { s.deleteNamespace(ns) })
	s.applyYAML("policy.yaml", fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: divided, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2, cluster3]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticClusterWeight:
        - {targetCluster: {clusterNames: [cluster1]}, weight: 3}
        - {targetCluster: {clusterNames: [cluster2]}, weight: 2}
        - {targetCluster: {clusterNames: [cluster3]}, weight: 1}
`, ns))
	deployment := func(name string, replicas int64) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: c, image: busybox:1.36}]}
`, name, ns, replicas)
	}
	var docs []string
	for i := range small {
		docs = append(docs, deployment(fmt.Sprintf("small-%02d", i), 6))
	}
	write := func(name, doc string) string {
		p := filepath.Join(s.dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	smallFile := write("small.yaml", strings.Join(docs, "---\n"))
	bigFile := write("big.yaml", deployment("big", 1<<31-1))

	start := time.Now()
	waitSmall := s.startCLI("apply", "-f", smallFile)
	waitBig := s.startCLI("apply", "-f", bigFile)
	out, errOut, code, err := waitBig()
	refused := time.Since(start)
	wantReason := "spec.replicas: invalid value 2147483647: more than the 100000 replicas this policyd accepts (--max-replicas)"
	if err != nil || code != 1 || !strings.Contains(errOut, "deployment.apps/big: "+wantReason) {
		t.Fatalf("apply of the 2^31-1 replica Deployment: want exit 1 and %q, got exit %d, %v\nstdout: %s\nstderr: %s", wantReason, code, err, out, errOut)
	}
	out, errOut, code, err = waitSmall()
	if err != nil || code != 0 || strings.Count(out, " created (generation 1)") != small {
		t.Fatalf("apply of %d small Deployments: exit %d, %v\nstdout: %s\nstderr: %s", small, code, err, out, errOut)
	}

	// The rejection is on the bus, for `flotilla replay` and any client.
	bus, err := natsbus.Connect(context.Background(), s.natsURL, natsbus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	bigKey := events.KeyOf("apps/v1", "Deployment", ns, "big")
	rejected, err := bus.LatestPerSubject(context.Background(), events.StreamPolicy, events.RejectedSubject(bigKey))
	var r events.Rejection
	if err != nil || len(rejected) != 1 || rejected[0].Err != nil || events.Decode(rejected[0].Event, &r) != nil ||
		len(r.Problems) != 1 || r.Problems[0].Field != "spec.replicas" || !strings.Contains(r.Problems[0].Reason, "more than the 100000 replicas") {
		t.Fatalf("the object.rejected event of big: %v, %+v (%v)", err, r, rejected)
	}

	// Every small Deployment is placed 3:2:1 and present in the members.
	want := map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1}
	remaining := bound - time.Since(start)
	var placed time.Duration
	eventually(t, remaining, fmt.Sprintf("%d placements of 3:2:1", small), func() error {
		got, err := s.placements(ns)
		if err != nil {
			return err
		}
		for i := range small {
			name := fmt.Sprintf("small-%02d", i)
			if diff := cmp.Diff(want, got[name]); diff != "" {
				return fmt.Errorf("placement of %s (-want +got):\n%s", name, diff)
			}
		}
		if p, ok := got["big"]; ok {
			t.Fatalf("big was placed: %v", p)
		}
		placed = time.Since(start)
		return nil
	})
	eventually(t, bound-time.Since(start), fmt.Sprintf("%d Deployments in every member", small), func() error {
		for m, replicas := range want {
			list, err := s.member(m).AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return err
			}
			got := map[string]int32{}
			for _, d := range list.Items {
				got[d.Name] = *d.Spec.Replicas
			}
			wantHere := map[string]int32{}
			for i := range small {
				wantHere[fmt.Sprintf("small-%02d", i)] = replicas
			}
			if diff := cmp.Diff(wantHere, got); diff != "" {
				return fmt.Errorf("Deployments in %s (-want +got):\n%s", m, diff)
			}
		}
		return nil
	})
	t.Logf("2^31-1 replicas refused after %s; %d templates placed after %s and in the members after %s (bound %s)",
		refused.Round(time.Millisecond), small, placed.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), bound)
}

// placements returns the clusters and replicas of every template of ns
// that the bus shows placed.
func (s *system) placements(ns string) (map[string]map[string]int32, error) {
	ps, err := s.decisionsIn(ns)
	if err != nil {
		return nil, err
	}
	res := map[string]map[string]int32{}
	for _, p := range ps {
		if !p.Scheduled {
			continue
		}
		res[p.Key.Name] = map[string]int32{}
		for _, c := range p.Clusters {
			res[p.Key.Name][c.Name] = c.Replicas
		}
	}
	return res, nil
}
