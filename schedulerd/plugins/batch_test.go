package plugins

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every in-tree filter that answers in batches gives, cluster by cluster,
// what Filter gives: on a snapshot's view (with bound affinities) and on
// plain clusters.
func TestFilterAllMatchesFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	pick := func(ss ...string) string { return ss[r.IntN(len(ss))] }
	for n := range 300 {
		cs := make([]framework.ClusterInfo, 1+r.IntN(30))
		for i := range cs {
			c := framework.ClusterInfo{Name: fmt.Sprintf("c%02d", i), Labels: map[string]string{"env": pick("prod", "dev")}}
			if r.IntN(2) == 0 {
				c.Spec.Region = pick("r1", "r2")
			}
			if r.IntN(3) == 0 {
				c.Spec.Provider = "aws"
			}
			if r.IntN(3) == 0 {
				c.Spec.Zones = []string{"z1"}
			}
			for range r.IntN(3) {
				c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: pick("a", "b", "cluster.karmada.io/not-ready"), Value: pick("", "x"), Effect: corev1.TaintEffect(pick("NoSchedule", "NoExecute", "PreferNoSchedule"))})
			}
			if r.IntN(3) == 0 {
				c.APIEnablements = []policy.APIEnablement{{GroupVersion: pick("apps/v1", "v1"), Resources: []policy.APIResource{{Name: "deployments", Kind: "Deployment"}}}}
				c.CompleteAPIs = r.IntN(2) == 0
			}
			cs[i] = c
		}
		snap := framework.NewSnapshot(cs)
		pl := policy.Placement{}
		if r.IntN(2) == 0 {
			pl.ClusterTolerations = []corev1.Toleration{{Key: pick("a", "b"), Operator: corev1.TolerationOpExists}}
		}
		pl.SpreadConstraints = []policy.SpreadConstraint{{SpreadByField: pick("cluster", "region", "zone", "provider")}}
		b := &events.Binding{Key: events.ObjectKey{Group: "apps", Kind: "Deployment", Name: "x"}, APIVersion: "apps/v1", Replicas: int32(r.IntN(3))}
		for _, withSnap := range []bool{false, true} {
			req := &framework.Request{Binding: b, Placement: &pl, Workload: b.Replicas > 0}
			view := make([]*framework.ClusterInfo, len(cs))
			for i := range cs {
				view[i] = &cs[i]
			}
			if withSnap {
				req.Snapshot, view = snap, snap.View()
			}
			for range r.IntN(3) {
				a := framework.CompileAffinity(&policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": pick("prod", "dev")}}, ExcludeClusters: []string{"c01"}})
				req.Snapshot.Bind(&a)
				req.Affinities = append(req.Affinities, a)
			}
			if r.IntN(2) == 0 {
				req.Previous = map[string]int32{"c00": 1, "c03": 2}
			}
			if r.IntN(2) == 0 {
				req.Evicted = map[string]struct{}{"c02": {}}
			}
			for _, f := range DefaultProfile().Filters {
				bf, ok := f.(framework.BatchFilterPlugin)
				if !ok {
					continue
				}
				if p, ok := f.(framework.PreparePlugin); ok {
					if p.Prepare(req).IsSkip() {
						continue
					}
				}
				got := make([]*framework.Status, len(view))
				bf.FilterAll(req, view, got)
				for i, c := range view {
					if want := f.Filter(req, c); !reflect.DeepEqual(got[i], want) && !(got[i].IsSuccess() && want.IsSuccess()) {
						t.Fatalf("case %d, snapshot %v, %s on %s: FilterAll %+v, Filter %+v", n, withSnap, f.Name(), c.Name, got[i], want)
					}
				}
			}
		}
	}
}
