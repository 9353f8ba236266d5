package core

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// The rules of reference features §1.3 (workload affinity filters), §2.3
// (queue order) and §4.2-§4.3 (quota usage and admission), one case each.

func grouped(name, ns string, replicas int32, groups *policy.WorkloadAffinityGroups) events.Binding {
	b := deployment(name, replicas, policy.Placement{ReplicaScheduling: &policy.ReplicaSchedulingStrategy{
		ReplicaSchedulingType: policy.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policy.DivisionPreferenceAggregated}})
	b.Key.Namespace = ns
	b.WorkloadAffinityGroups = groups
	return b
}

func affinity(g string) *policy.WorkloadAffinityGroups {
	return &policy.WorkloadAffinityGroups{AffinityGroup: g}
}
func antiAffinity(g string) *policy.WorkloadAffinityGroups {
	return &policy.WorkloadAffinityGroups{AntiAffinityGroup: g}
}

func TestWorkloadAffinityRules(t *testing.T) {
	snap := framework.NewSnapshot([]framework.ClusterInfo{cluster("m1", free(100)), cluster("m2", free(100)), cluster("m3", free(100))})
	type peer struct {
		b        events.Binding
		clusters string
	}
	tests := []struct {
		name         string
		peers        []peer
		b            events.Binding
		previous     string
		wantFeasible []string
		wantReason   string // the diagnosis of the first filtered cluster
	}{
		{
			name:         "rule 2: a binding without a group is not filtered",
			peers:        []peer{{grouped("p", "default", 1, antiAffinity("app=a")), "m1:1"}},
			b:            grouped("web", "default", 1, nil),
			wantFeasible: []string{"m1", "m2", "m3"},
		},
		{
			name:         "rule 5: the first placed workload of an affinity group is unconstrained",
			b:            grouped("web", "default", 1, affinity("app=a")),
			wantFeasible: []string{"m1", "m2", "m3"},
		},
		{
			name:         "rule 5: affinity keeps only the clusters every placed peer lists (0 replicas included)",
			peers:        []peer{{grouped("p1", "default", 1, affinity("app=a")), "m1:1 m2:0"}, {grouped("p2", "default", 1, affinity("app=a")), "m2:3"}},
			b:            grouped("web", "default", 1, affinity("app=a")),
			wantFeasible: []string{"m2"},
			wantReason:   "WorkloadAffinity: ResourceBinding with the same affinity group does not target this cluster",
		},
		{
			name:         "rule 5: an affinity peer with no clusters is ignored",
			peers:        []peer{{grouped("p1", "default", 1, affinity("app=a")), ""}, {grouped("p2", "default", 1, affinity("app=a")), "m3:1"}},
			b:            grouped("web", "default", 1, affinity("app=a")),
			wantFeasible: []string{"m3"},
			wantReason:   "WorkloadAffinity: ResourceBinding with the same affinity group does not target this cluster",
		},
		{
			name:         "rule 6: anti-affinity fails every cluster any peer lists",
			peers:        []peer{{grouped("p1", "default", 1, antiAffinity("app=a")), "m1:1"}, {grouped("p2", "default", 1, antiAffinity("app=a")), "m2:1"}},
			b:            grouped("web", "default", 1, antiAffinity("app=a")),
			wantFeasible: []string{"m3"},
			wantReason:   "WorkloadAntiAffinity: cluster already has workload with the same anti-affinity group",
		},
		{
			name:         "rule 3: a peer in another namespace is ignored",
			peers:        []peer{{grouped("p1", "other", 1, antiAffinity("app=a")), "m1:1"}},
			b:            grouped("web", "default", 1, antiAffinity("app=a")),
			wantFeasible: []string{"m1", "m2", "m3"},
		},
		{
			name:         "rule 3: a peer of another group is ignored",
			peers:        []peer{{grouped("p1", "default", 1, antiAffinity("app=b")), "m1:1"}},
			b:            grouped("web", "default", 1, antiAffinity("app=a")),
			wantFeasible: []string{"m1", "m2", "m3"},
		},
		{
			name:         "rule 3: the binding itself is not its own peer",
			peers:        []peer{{grouped("web", "default", 1, antiAffinity("app=a")), "m1:1"}},
			b:            grouped("web", "default", 1, antiAffinity("app=a")),
			previous:     "",
			wantFeasible: []string{"m1", "m2", "m3"},
		},
		{
			name:         "rule 1: a cluster in the binding's own placement always passes",
			peers:        []peer{{grouped("p1", "default", 1, antiAffinity("app=a")), "m1:1"}},
			b:            grouped("web", "default", 1, antiAffinity("app=a")),
			previous:     "m1:1",
			wantFeasible: []string{"m1", "m2", "m3"},
		},
		{
			name:         "rule 7: no feasible cluster is no cluster fits",
			peers:        []peer{{grouped("p1", "default", 1, antiAffinity("app=a")), "m1:1 m2:1 m3:1"}},
			b:            grouped("web", "default", 1, antiAffinity("app=a")),
			wantFeasible: nil,
			wantReason:   "WorkloadAntiAffinity: cluster already has workload with the same anti-affinity group",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := NewPlaced()
			for _, p := range tt.peers {
				pl.Restore(&p.b, targetsOf(p.clusters))
			}
			in := DecideInput{Binding: tt.b, Snapshot: snap}
			if tt.previous != "" {
				in.Previous = &events.PlacementDecision{Scheduled: true, Clusters: targetsOf(tt.previous)}
			}
			p := pl.Decide(newDefault(), in)
			if diff := cmp.Diff(tt.wantFeasible, p.Feasible); diff != "" {
				t.Errorf("feasible (-want +got):\n%s", diff)
			}
			reason := ""
			for _, c := range []string{"m1", "m2", "m3"} {
				if rs := p.Diagnosis[c]; len(rs) > 0 {
					reason = rs[0]
					break
				}
			}
			if reason != tt.wantReason {
				t.Errorf("diagnosis %q, want %q", reason, tt.wantReason)
			}
		})
	}
}

func TestWorkloadAffinityIsOrderDependent(t *testing.T) {
	// Reference features §1.4: an affinity group with Duplicated and no
	// spread constraint: the first workload takes every cluster, the next
	// the intersection; anti-affinity: the first placed wins.
	snap := framework.NewSnapshot([]framework.ClusterInfo{cluster("m1", free(100)), cluster("m2", free(100))})
	pl := NewPlaced()
	a := grouped("a", "default", 1, antiAffinity("app=x"))
	b := grouped("b", "default", 1, antiAffinity("app=x"))
	pa := pl.Decide(newDefault(), DecideInput{Binding: a, Snapshot: snap})
	pb := pl.Decide(newDefault(), DecideInput{Binding: b, Snapshot: snap})
	if placed(pa.Clusters) == placed(pb.Clusters) || !pa.Scheduled || !pb.Scheduled {
		t.Errorf("anti-affinity: a on %q, b on %q: want two different clusters", placed(pa.Clusters), placed(pb.Clusters))
	}
	dup := func(name string) events.Binding {
		x := deployment(name, 1, policy.Placement{})
		x.WorkloadAffinityGroups = affinity("app=y")
		return x
	}
	pc := pl.Decide(newDefault(), DecideInput{Binding: dup("c"), Snapshot: snap})
	pd := pl.Decide(newDefault(), DecideInput{Binding: dup("d"), Snapshot: snap})
	if diff := cmp.Diff("m1:1 m2:1", placed(pc.Clusters)); diff != "" {
		t.Errorf("first of the affinity group takes every cluster (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(placed(pc.Clusters), placed(pd.Clusters)); diff != "" {
		t.Errorf("the next takes the intersection (-want +got):\n%s", diff)
	}
}

func TestKarmadasWorkedExampleExactlyOneOfTwoConflictingWorkloadsIsPlaced(t *testing.T) {
	// Reference features §1.4: A has affinity group g on cluster X; B,
	// anti-affinity group h, is on X; C is in both g and h with maxGroups
	// 1: its affinity allows only X, its anti-affinity forbids X.
	snap := framework.NewSnapshot([]framework.ClusterInfo{cluster("x", free(100)), cluster("y", free(100))})
	pl := NewPlaced()
	a, b := grouped("a", "default", 1, affinity("g=1")), grouped("b", "default", 1, antiAffinity("h=1"))
	pl.Restore(&a, targetsOf("x:1"))
	pl.Restore(&b, targetsOf("x:1"))
	c := grouped("c", "default", 1, &policy.WorkloadAffinityGroups{AffinityGroup: "g=1", AntiAffinityGroup: "h=1"})
	p := pl.Decide(newDefault(), DecideInput{Binding: c, Snapshot: snap})
	if p.Scheduled || len(p.Clusters) != 0 {
		t.Errorf("c placed on %q, want nowhere (b holds x)", placed(p.Clusters))
	}
}

func quota(ns, name string, overall corev1.ResourceList) policy.FederatedResourceQuota {
	q := policy.FederatedResourceQuota{Spec: policy.FederatedResourceQuotaSpec{Overall: overall}}
	q.Namespace, q.Name = ns, name
	return q
}

func res(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestQuotaRules(t *testing.T) {
	key := func(ns, name string) events.ObjectKey {
		return events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: ns, Name: name}
	}
	tests := []struct {
		name     string
		quotas   []policy.FederatedResourceQuota
		recorded map[events.ObjectKey]corev1.ResourceList
		key      events.ObjectKey
		usage    corev1.ResourceList
		want     string
		wantUsed corev1.ResourceList // of the first quota, after
	}{
		{
			name:     "§4.3 rule 4: within the limit is admitted and the usage reserved",
			quotas:   []policy.FederatedResourceQuota{quota("a", "q", res("cpu", "2"))},
			key:      key("a", "web"),
			usage:    res("cpu", "1500m"),
			wantUsed: res("cpu", "1500m"),
		},
		{
			name:     "§4.3 rule 4: equal to the limit is admitted",
			quotas:   []policy.FederatedResourceQuota{quota("a", "q", res("cpu", "2"))},
			key:      key("a", "web"),
			usage:    res("cpu", "2"),
			wantUsed: res("cpu", "2"),
		},
		{
			name:     "§4.3 rule 4: above the limit is refused with Karmada's message; requested sum is the namespace's usage after the change",
			quotas:   []policy.FederatedResourceQuota{quota("a", "q", res("cpu", "2"))},
			recorded: map[events.ObjectKey]corev1.ResourceList{key("a", "db"): res("cpu", "1")},
			key:      key("a", "web"),
			usage:    res("cpu", "1500m"),
			want:     "FederatedResourceQuota(a/q) exceeded for resource cpu: requested sum 2500m, limit 2.",
			wantUsed: res("cpu", "1"),
		},
		{
			name:     "§4.3 rule 4: resources the quota does not limit are not counted",
			quotas:   []policy.FederatedResourceQuota{quota("a", "q", res("cpu", "2"))},
			key:      key("a", "web"),
			usage:    res("cpu", "1", "memory", "100Gi"),
			wantUsed: res("cpu", "1"),
		},
		{
			name:     "§4.2 rule 3: an overall written as requests.cpu is never consumed",
			quotas:   []policy.FederatedResourceQuota{quota("a", "q", res("requests.cpu", "1"))},
			key:      key("a", "web"),
			usage:    res("cpu", "8"),
			wantUsed: res(),
		},
		{
			name:     "§4.3 rule 4: a quota of another namespace does not apply",
			quotas:   []policy.FederatedResourceQuota{quota("b", "q", res("cpu", "1"))},
			key:      key("a", "web"),
			usage:    res("cpu", "8"),
			wantUsed: res(),
		},
		{
			name:     "§4.3 rule 6: several quotas must all admit the change",
			quotas:   []policy.FederatedResourceQuota{quota("a", "q1", res("cpu", "8")), quota("a", "q2", res("cpu", "1"))},
			key:      key("a", "web"),
			usage:    res("cpu", "2"),
			want:     "FederatedResourceQuota(a/q2) exceeded for resource cpu: requested sum 2, limit 1.",
			wantUsed: res(),
		},
		{
			name:     "§4.3 rule 6: a scale-down is refused while the quota stays over its limit",
			quotas:   []policy.FederatedResourceQuota{quota("a", "q", res("cpu", "1"))},
			recorded: map[events.ObjectKey]corev1.ResourceList{key("a", "web"): res("cpu", "4")},
			key:      key("a", "web"),
			usage:    res("cpu", "2"),
			want:     "FederatedResourceQuota(a/q) exceeded for resource cpu: requested sum 2, limit 1.",
			wantUsed: res("cpu", "4"),
		},
		{
			name:     "§4.3 rule 3: no change of usage is admitted whatever the quota",
			quotas:   []policy.FederatedResourceQuota{quota("a", "q", res("cpu", "1"))},
			recorded: map[events.ObjectKey]corev1.ResourceList{key("a", "web"): res("cpu", "4")},
			key:      key("a", "web"),
			usage:    res("cpu", "4"),
			wantUsed: res("cpu", "4"),
		},
		{
			name:     "§4.4 rule: ClusterResourceBindings (cluster-scoped workloads) never count",
			quotas:   []policy.FederatedResourceQuota{quota("a", "q", res("cpu", "1"))},
			key:      key("", "web"),
			usage:    res("cpu", "4"),
			wantUsed: res(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger()
			for k, u := range tt.recorded {
				l.Record(k, u)
			}
			for _, q := range tt.quotas {
				l.SetQuota(q, nil)
			}
			if got := l.Admit(tt.key, tt.usage); got != tt.want {
				t.Errorf("admit: got %q, want %q", got, tt.want)
			}
			used, _ := l.Used(tt.quotas[0].Namespace, tt.quotas[0].Name)
			if diff := cmp.Diff(show(tt.wantUsed), show(used)); diff != "" {
				t.Errorf("used (-want +got):\n%s", diff)
			}
		})
	}
}

func TestQuotaUsageRules(t *testing.T) {
	tests := []struct {
		name       string
		request    corev1.ResourceList
		components []policy.Component
		replicas   []int32
		want       corev1.ResourceList
	}{
		{"§4.2 rule 2: request × the replicas of every cluster", res("cpu", "500m", "memory", "1Gi"), nil, []int32{2, 1}, res("cpu", "1500m", "memory", "3Gi")},
		{"§4.2 rule 2: no replicas count nothing", res("cpu", "1"), nil, []int32{0}, nil},
		{"§4.2 rule 1: with components, one whole set per cluster entry, its replicas ignored",
			nil, []policy.Component{
				{Name: "lead", Replicas: 1, ReplicaRequirements: &policy.ComponentRequirements{ResourceRequest: res("cpu", "1")}},
				{Name: "work", Replicas: 2, ReplicaRequirements: &policy.ComponentRequirements{ResourceRequest: res("cpu", "500m")}},
				{Name: "idle", Replicas: 0, ReplicaRequirements: &policy.ComponentRequirements{ResourceRequest: res("cpu", "9")}},
				{Name: "free", Replicas: 3},
			}, []int32{0, 0}, res("cpu", "4")},
		{"§4.2 rule 1: components with no clusters count nothing",
			nil, []policy.Component{{Name: "lead", Replicas: 1, ReplicaRequirements: &policy.ComponentRequirements{ResourceRequest: res("cpu", "1")}}}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := policy.Usage(tt.request, tt.components, tt.replicas)
			if diff := cmp.Diff(show(tt.want), show(got)); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestQueueOrderIsPriorityThenArrival(t *testing.T) {
	// Reference features §2.3 rule 2: priority descending, then the time
	// of insertion ascending.
	k := func(n string) events.ObjectKey { return events.ObjectKey{Kind: "Deployment", Namespace: "a", Name: n} }
	q := []Queued{{k("low-early"), 0, 1}, {k("high-late"), 100, 5}, {k("low-late"), 0, 4}, {k("high-early"), 100, 2}, {k("negative"), -5, 0}}
	QueueOrder(q)
	var got []string
	for _, x := range q {
		got = append(got, x.Key.Name)
	}
	if diff := cmp.Diff([]string{"high-early", "high-late", "low-early", "low-late", "negative"}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestAQuotaRefusedPlacementKeepsThePreviousOne(t *testing.T) {
	// Reference features §4.5: the template keeps its previous placement
	// (none for a new one), Scheduled false, reason QuotaExceeded.
	snap := framework.NewSnapshot([]framework.ClusterInfo{cluster("m1", free(100))})
	pl := NewPlaced()
	pl.Quotas.SetQuota(quota("default", "q", res("cpu", "2")), nil)
	b := deployment("web", 2, policy.Placement{})
	b.ReplicaRequirements = res("cpu", "1")
	first := pl.Decide(newDefault(), DecideInput{Binding: b, Snapshot: snap})
	if !first.Scheduled || placed(first.Clusters) != "m1:2" {
		t.Fatalf("first: %+v", first)
	}
	b.Replicas, b.Revision = 3, 2
	p := pl.Decide(newDefault(), DecideInput{Binding: b, Snapshot: snap, Previous: &first})
	want := "QuotaExceeded: FederatedResourceQuota(default/q) exceeded for resource cpu: requested sum 3, limit 2."
	if p.Scheduled || p.Error != want || placed(p.Clusters) != "m1:2" {
		t.Errorf("scale-up over quota: scheduled %v, error %q, clusters %q; want false, %q, m1:2", p.Scheduled, p.Error, placed(p.Clusters), want)
	}
	other := deployment("db", 1, policy.Placement{})
	other.ReplicaRequirements = res("cpu", "1")
	if p := pl.Decide(newDefault(), DecideInput{Binding: other, Snapshot: snap}); p.Scheduled || len(p.Clusters) != 0 {
		t.Errorf("new template over quota: scheduled %v, clusters %q; want false and none", p.Scheduled, placed(p.Clusters))
	}
	pl.Forget(b.Key)
	if p := pl.Decide(newDefault(), DecideInput{Binding: other, Snapshot: snap}); !p.Scheduled {
		t.Errorf("after the first is deleted its room is free: %+v", p)
	}
}

// show writes a resource list as "cpu=1500m memory=3Gi", names sorted.
func show(l corev1.ResourceList) string {
	s := ""
	for _, n := range sortedResourceNames(l) {
		q := l[n]
		s += string(n) + "=" + q.String() + " "
	}
	return s
}

func sortedResourceNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
