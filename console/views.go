package console

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/readmodel"
)

// clusterView is one member as the overview and its own page show it.
type clusterView struct {
	Name, State, Reason, Message string
	Taints                       []taintView
	Bars                         []bar
	Workloads                    int
	c                            readmodel.Cluster
}

type taintView struct {
	Text, Added string
}

// bar is one resource's capacity: used of allocatable.
type bar struct {
	Resource, Used, Total, Free string
	Percent                     int
}

// barResources are the capacity bars, in order, with what a person calls them.
var barResources = []struct {
	name  corev1.ResourceName
	label string
}{{corev1.ResourceCPU, "cpu"}, {corev1.ResourceMemory, "memory"}, {corev1.ResourcePods, "pods"}, {"nvidia.com/gpu", "GPUs"}}

func newClusterView(c readmodel.Cluster, workloads int) clusterView {
	v := clusterView{Name: c.Registration.Name, State: events.ClusterStateUnknown, Workloads: workloads, c: c}
	if h := c.Health; h != nil {
		v.State, v.Reason, v.Message = h.State, h.Reason, h.Message
		for _, t := range h.Taints {
			v.Taints = append(v.Taints, newTaint(t))
		}
	}
	for _, t := range c.Registration.Spec.Taints {
		v.Taints = append(v.Taints, newTaint(t))
	}
	if cp := c.Capacity; cp != nil {
		for _, r := range barResources {
			total, ok := cp.Allocatable[r.name]
			if !ok {
				continue
			}
			used := cp.Allocated[r.name]
			free := total.DeepCopy()
			free.Sub(used)
			b := bar{Resource: r.label, Used: used.String(), Total: total.String(), Free: free.String()}
			if t := total.MilliValue(); t > 0 {
				b.Percent = int(min(100, used.MilliValue()*100/t))
			}
			v.Bars = append(v.Bars, b)
		}
	}
	return v
}

func newTaint(t corev1.Taint) taintView {
	v := taintView{Text: t.Key + "=" + t.Value + ":" + string(t.Effect)}
	if t.Value == "" {
		v.Text = t.Key + ":" + string(t.Effect)
	}
	if t.TimeAdded != nil {
		v.Added = t.TimeAdded.UTC().Format("2006-01-02 15:04:05Z")
	}
	return v
}

// workloadsOn counts the templates with work in each cluster (a deleted
// copy is none).
func workloadsOn(snap *snapshot) map[string]int {
	out := map[string]int{}
	for _, s := range snap.fleet.Work.Items {
		if s.Phase != events.WorkDeleted {
			out[s.Cluster]++
		}
	}
	return out
}

type overviewData struct {
	Clusters []clusterView
	Totals   totals
	Dead     []readmodel.DeadLetter
}

type totals struct {
	Clusters, Ready, Templates, Works int
	Replicas, ReadyReplicas           int32
	Capacity                          []bar
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	snap, err := s.read(r.Context())
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err)
		return
	}
	d := overviewData{Dead: snap.dead}
	on := workloadsOn(snap)
	sums := map[string][2]resource.Quantity{}
	for _, c := range snap.fleet.Clusters {
		v := newClusterView(c, on[c.Registration.Name])
		d.Clusters = append(d.Clusters, v)
		d.Totals.Clusters++
		if c.Health != nil && c.Health.Ready {
			d.Totals.Ready++
		}
		if cp := c.Capacity; cp != nil {
			for _, res := range barResources {
				if total, ok := cp.Allocatable[res.name]; ok {
					sum := sums[res.label]
					sum[0].Add(cp.Allocated[res.name])
					sum[1].Add(total)
					sums[res.label] = sum
				}
			}
		}
	}
	for _, res := range barResources {
		if sum, ok := sums[res.label]; ok {
			b := bar{Resource: res.label, Used: sum[0].String(), Total: sum[1].String()}
			if t := sum[1].MilliValue(); t > 0 {
				b.Percent = int(min(100, sum[0].MilliValue()*100/t))
			}
			d.Totals.Capacity = append(d.Totals.Capacity, b)
		}
	}
	d.Totals.Templates = len(snap.keys) // placed or not
	for _, t := range snap.index {
		d.Totals.Works += len(t.Work)
		ready, desired := t.Totals()
		d.Totals.ReadyReplicas += ready
		d.Totals.Replicas += desired
	}
	s.render(w, r, "overview", page{Title: "Overview", Nav: "overview", Data: d, Live: true, ReadAt: snap.readAt})
}

// filters are the matrix's filters, from the query.
type filters struct {
	Namespace, Kind, Policy, Cluster string
	Page                             int
}

func filtersOf(q url.Values) filters {
	f := filters{Namespace: q.Get("namespace"), Kind: q.Get("kind"), Policy: q.Get("policy"), Cluster: q.Get("cluster")}
	f.Page, _ = strconv.Atoi(q.Get("page"))
	f.Page = max(f.Page, 1)
	return f
}

// query is f as a query string, on page p.
func (f filters) query(p int) string {
	q := url.Values{}
	for k, v := range map[string]string{"namespace": f.Namespace, "kind": f.Kind, "policy": f.Policy, "cluster": f.Cluster} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if p > 1 {
		q.Set("page", strconv.Itoa(p))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// row is one template of the matrix.
type row struct {
	Key               events.ObjectKey
	Ref, Link, Policy string
	Ready, Desired    int32
	// HasReplicas: a workload kind, whose cells carry data-replicas.
	HasReplicas bool
	Cells       []cell
}

// cell is one template in one cluster.
type cell struct {
	Cluster, Phase, Message string
	Replicas, Ready         int32
	// Placed: the template has work or a placement there.
	Placed bool
}

type matrixData struct {
	Filters                  filters
	Clusters                 []string
	Rows                     []row
	Matched, Page, Pages     int
	Prev, Next               string
	Namespaces, Kinds, Plans []string
}

// policyName is how the matrix names a claiming policy: kind/name, with
// the namespace of a namespaced one.
func policyName(ref *events.PolicyRef) string {
	if ref == nil {
		return ""
	}
	n := strings.ToLower(ref.Kind) + "/" + ref.Name
	if ref.Namespace != "" {
		n = ref.Namespace + "/" + n
	}
	return n
}

// policyMatches reports whether the policy a user typed (name, kind/name
// or namespace/kind/name, the kind in any kubectl spelling: pp,
// propagationpolicies, PropagationPolicy.policy.karmada.io) names got (a
// policyName).
func policyMatches(want, got string) bool {
	split := func(s string) (ns, kind, name string) {
		parts := strings.Split(s, "/")
		switch len(parts) {
		case 1:
			return "", "", parts[0]
		case 2:
			return "", parts[0], parts[1]
		}
		return parts[0], parts[1], strings.Join(parts[2:], "/")
	}
	wantNS, wantKind, wantName := split(want)
	gotNS, gotKind, gotName := split(got)
	return got != "" && wantName == gotName && (wantNS == "" || wantNS == gotNS) &&
		(wantKind == "" || readmodel.MatchesKind(wantKind, events.ObjectKey{Group: "policy.karmada.io", Kind: gotKind}))
}

func (s *Server) workloads(w http.ResponseWriter, r *http.Request) {
	snap, err := s.read(r.Context())
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err)
		return
	}
	f := filtersOf(r.URL.Query())
	s.render(w, r, "workloads", page{Title: "Workloads", Nav: "workloads", Data: s.matrix(snap, f), Live: true, ReadAt: snap.readAt})
}

// matrix computes one page of the templates × clusters matrix.
func (s *Server) matrix(snap *snapshot, f filters) matrixData {
	d := matrixData{Filters: f}
	nsSeen, kindSeen, polSeen := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var matched []events.ObjectKey
	for _, k := range snap.keys {
		name := snap.policies[k]
		nsSeen[k.Namespace], kindSeen[k.Kind] = true, true
		if name != "" {
			polSeen[name] = true
		}
		switch {
		case f.Namespace != "" && k.Namespace != f.Namespace,
			f.Kind != "" && !readmodel.MatchesKind(f.Kind, k),
			f.Policy != "" && !policyMatches(f.Policy, name),
			f.Cluster != "" && !onCluster(snap.index[k], f.Cluster):
			continue
		}
		matched = append(matched, k)
	}
	d.Namespaces, d.Kinds, d.Plans = sortedSet(nsSeen), sortedSet(kindSeen), sortedSet(polSeen)
	for _, c := range snap.fleet.Clusters {
		if f.Cluster == "" || c.Registration.Name == f.Cluster {
			d.Clusters = append(d.Clusters, c.Registration.Name)
		}
	}
	size := max(s.PageSize, 1)
	d.Matched, d.Pages = len(matched), max(1, (len(matched)+size-1)/size)
	d.Page = min(f.Page, d.Pages)
	if d.Page > 1 {
		d.Prev = "/workloads" + f.query(d.Page-1)
	}
	if d.Page < d.Pages {
		d.Next = "/workloads" + f.query(d.Page+1)
	}
	for _, k := range matched[(d.Page-1)*size : min(len(matched), d.Page*size)] {
		d.Rows = append(d.Rows, newRow(snap, snap.index[k], k, d.Clusters))
	}
	return d
}

func onCluster(t readmodel.Template, cluster string) bool {
	for _, s := range t.Work {
		if s.Cluster == cluster {
			return true
		}
	}
	return false
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func newRow(snap *snapshot, t readmodel.Template, k events.ObjectKey, clusters []string) row {
	rw := row{Key: k, Ref: k.Ref(), Link: workloadLink(k), Policy: snap.policies[k]}
	if b := t.Placement.Binding; b != nil && b.Replicas > 0 {
		rw.HasReplicas = true
	} else if r, ok := snap.fleet.Published.Bindings[k]; ok && r.Replicas > 0 {
		rw.HasReplicas = true
	}
	rw.Ready, rw.Desired = t.ReadyOfAsked()
	byCluster := map[string]events.WorkStatus{}
	for _, s := range t.Work {
		byCluster[s.Cluster] = s
	}
	for _, c := range clusters {
		cl := cell{Cluster: c}
		if s, ok := byCluster[c]; ok {
			cl.Placed = true
			cl.Phase, cl.Message = t.Phase(s)
			cl.Replicas, cl.Ready = t.Desired(s), s.ReadyReplicas
		}
		rw.Cells = append(rw.Cells, cl)
	}
	return rw
}

// workloadLink is the URL of a template's page: namespace ("_" for a
// cluster-scoped one), Kind.group and name.
func workloadLink(k events.ObjectKey) string {
	ns := k.Namespace
	if ns == "" {
		ns = "_"
	}
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	return "/workloads/" + url.PathEscape(ns) + "/" + url.PathEscape(kind) + "/" + url.PathEscape(k.Name)
}

// keyOfLink is the template a workload URL names, among known.
func keyOfLink(ns, kind, name string, known func(func(events.ObjectKey) bool)) (events.ObjectKey, bool) {
	if ns == "_" {
		ns = ""
	}
	var found events.ObjectKey
	ok := false
	known(func(k events.ObjectKey) bool {
		full := k.Kind
		if k.Group != "" {
			full += "." + k.Group
		}
		if k.Namespace == ns && k.Name == name && (strings.EqualFold(full, kind) || strings.EqualFold(k.Kind, kind)) {
			found, ok = k, true
			return false
		}
		return true
	})
	return found, ok
}

// percent formats a share for a bar's label.
func percent(p int) string { return fmt.Sprintf("%d%%", p) }
