package simulate

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/executord/render"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// snapshot is the scheduler's view of the Cluster documents, sorted by
// name, built the way schedulerd builds it from the registration, health
// and capacity it hears about.
type snapshot struct {
	base    []framework.ClusterInfo
	names   []string            // of base, sorted
	prepped *framework.Snapshot // base, prepared once for the scheduler
	render  map[string]render.Cluster
	byName  map[string]policy.ClusterFacts // selector facts per cluster
	index   map[string]int                 // position in base
	open    []int                          // indexes into base of the clusters with unbounded capacity
	mu      sync.RWMutex
	byNeeds map[string]*framework.Snapshot
}

// unboundedPods is the pod capacity given to a cluster without a resource
// summary: far above MaxInt32, which the estimator reads as "unbounded"
// and turns into the desired replica count.
const unboundedPods = int64(1) << 40

// newSnapshot turns Cluster objects into ClusterInfos:
//
//   - labels, annotations and spec (taints included) as registered;
//   - status.conditions Ready=False adds the NoSchedule taint
//     cluster.karmada.io/not-ready and Ready=Unknown the NoSchedule taint
//     cluster.karmada.io/unreachable, as Karmada's cluster controller does
//     (unless spec.taints already has them); no Ready condition, or no
//     status at all, is a Ready cluster (a what-if convenience);
//   - status.apiEnablements, when given, is the authoritative list of
//     served APIs (CompleteAPIs, unless the CompleteAPIEnablements
//     condition is explicitly False); when absent the cluster serves every
//     API (the APIEnablement plugin's rule for a cluster without a list);
//   - status.resourceSummary, when given, is the capacity the estimator
//     reads, as reported. When absent the cluster has unbounded capacity:
//     it can take the desired replica count. schedulerd's core gives a
//     cluster without figures (nil Allocatable) 0, and it has no
//     "unbounded" flag, so the simulation synthesises an allocatable list
//     large enough that the estimator's answer saturates at MaxInt32, which
//     it turns into the desired count (see forBinding).
func newSnapshot(cs []policy.Cluster) *snapshot {
	s := &snapshot{render: make(map[string]render.Cluster, len(cs)), byName: make(map[string]policy.ClusterFacts, len(cs)), byNeeds: map[string]*framework.Snapshot{}, index: make(map[string]int, len(cs))}
	sorted := slices.Clone(cs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, c := range sorted {
		ci := framework.ClusterInfo{Name: c.Name, Labels: c.Labels, Annotations: c.Annotations, Spec: c.Spec, Ready: true}
		ci.Spec.Taints = slices.Clone(c.Spec.Taints)
		st := &c.Status
		if cond := meta.FindStatusCondition(st.Conditions, policy.ClusterConditionReady); cond != nil {
			if key, tainted := policy.ReadyTaint(string(cond.Status)); tainted {
				ci.Ready = false
				ci.Spec.Taints = addTaint(ci.Spec.Taints, key)
			}
		}
		if len(st.APIEnablements) > 0 {
			ci.APIEnablements = st.APIEnablements
			cond := meta.FindStatusCondition(st.Conditions, policy.ClusterConditionCompleteAPIs)
			ci.CompleteAPIs = cond == nil || cond.Status != metav1.ConditionFalse
		}
		if rs := st.ResourceSummary; rs != nil {
			ci.Allocatable, ci.Allocated, ci.Allocating = rs.Allocatable, rs.Allocated, rs.Allocating
		} else {
			ci.Allocatable = corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(unboundedPods, resource.DecimalSI)}
			s.open = append(s.open, len(s.base))
		}
		s.index[c.Name] = len(s.base)
		s.base = append(s.base, ci)
		s.names = append(s.names, c.Name)
		s.render[c.Name] = render.Cluster{Name: c.Name, Labels: c.Labels, Spec: c.Spec}
		s.byName[c.Name] = policy.FactsOf(c.Name, c.Labels, c.Spec)
	}
	s.prepped = framework.NewSnapshot(s.base)
	return s
}

func addTaint(ts []corev1.Taint, key string) []corev1.Taint {
	for _, t := range ts {
		if t.Key == key && t.Effect == corev1.TaintEffectNoSchedule {
			return ts
		}
	}
	return append(ts, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
}

// renderCluster is what render needs of a cluster: the registered labels
// and spec (without the health taints), as executord has them. A cluster
// the input has no Cluster object for (one a ResourceBinding names) is
// known by name only.
func (s *snapshot) renderCluster(name string) render.Cluster {
	if c, ok := s.render[name]; ok {
		return c
	}
	return render.Cluster{Name: name}
}

func (s *snapshot) facts(name string, rc render.Cluster) policy.ClusterFacts {
	if f, ok := s.byName[name]; ok {
		return f
	}
	return policy.FactsOf(rc.Name, rc.Labels, rc.Spec)
}

// forBinding returns the scheduler's snapshot for one binding. The
// estimator gives 0 for a requested resource a cluster does not list, so
// the clusters with unbounded capacity must list every resource the
// binding requests, with enough of it: request x 2^31 (saturating at
// MaxInt64), so that the estimator's answer reaches MaxInt32 and becomes
// the desired count. Each such snapshot is prepared once and shared by
// every binding with the same requests. A binding with components
// requests what one whole set of them does.
func (s *snapshot) forBinding(b *events.Binding) *framework.Snapshot {
	requests := b.ReplicaRequirements
	if len(b.Components) > 0 {
		requests = policy.Usage(nil, b.Components, []int32{0})
	}
	if len(s.open) == 0 || len(requests) == 0 {
		return s.prepped
	}
	type need struct {
		name  corev1.ResourceName
		value int64 // in framework.Units, as the estimator compares
	}
	needs := make([]need, 0, len(requests))
	for name, q := range requests {
		if v := framework.Units(name, q); v > 0 && name != corev1.ResourcePods {
			needs = append(needs, need{name, v})
		}
	}
	if len(needs) == 0 {
		return s.prepped
	}
	sort.Slice(needs, func(i, j int) bool { return needs[i].name < needs[j].name })
	var sb strings.Builder
	for _, n := range needs {
		sb.WriteString(string(n.name))
		sb.WriteByte('=')
		sb.WriteString(strconv.FormatInt(n.value, 10))
		sb.WriteByte(';')
	}
	sig := sb.String()
	s.mu.RLock()
	snap, ok := s.byNeeds[sig]
	s.mu.RUnlock()
	if ok {
		return snap
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if snap, ok := s.byNeeds[sig]; ok {
		return snap
	}
	alloc := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(unboundedPods, resource.DecimalSI)}
	for _, n := range needs {
		v := int64(math.MaxInt64)
		if n.value <= math.MaxInt64>>31 {
			v = n.value << 31
		}
		if n.name == corev1.ResourceCPU { // Units are millicores
			alloc[n.name] = *resource.NewMilliQuantity(v, resource.DecimalSI)
		} else {
			alloc[n.name] = *resource.NewQuantity(v, resource.DecimalSI)
		}
	}
	cs := slices.Clone(s.base)
	for _, i := range s.open {
		cs[i].Allocatable = alloc
	}
	snap = framework.NewSnapshot(cs)
	s.byNeeds[sig] = snap
	return snap
}
