package console

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/executord/render"
	"github.com/flotilla-io/flotilla/readmodel"
)

type workloadData struct {
	Ref, Policy, Template string
	Overrides             []string
	Explanation           string
	Ready, Desired        int32
	Members               []member
	Timeline              []entry
	HistoryError          string
}

// member is the template in one cluster: its work and the manifest
// executord applies there.
type member struct {
	Cluster, Phase, Message, Health, Manifest string
	Replicas, Ready                           int32
	Overrides                                 []string
}

func (s *Server) workload(w http.ResponseWriter, r *http.Request) {
	snap, err := s.read(r.Context())
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err)
		return
	}
	idx := snap.index
	key, ok := keyOfLink(r.PathValue("namespace"), r.PathValue("kind"), r.PathValue("name"), func(yield func(events.ObjectKey) bool) {
		for k := range idx {
			if !yield(k) {
				return
			}
		}
		for k := range snap.fleet.Published.Records {
			if !yield(k) {
				return
			}
		}
	})
	if !ok {
		s.fail(w, r, http.StatusNotFound, fmt.Errorf("no template %s/%s in namespace %s", r.PathValue("kind"), r.PathValue("name"), r.PathValue("namespace")))
		return
	}
	t := idx[key]
	d := workloadData{Ref: key.Ref()}
	pol, _ := snap.fleet.Published.ClaimingPolicy(key)
	d.Policy = policyName(pol)
	d.Ready, d.Desired = t.ReadyOfAsked()
	// The live binding, whole; the placement's keeps only what the read
	// model needs (readmodel.Decisions), for a template deleted since.
	b := t.Placement.Binding
	if pb, ok := snap.fleet.Published.Bindings[key]; ok {
		b = &pb
	}
	if rec, ok := snap.fleet.Published.Records[key]; ok {
		d.Template = toYAML(withoutSecretValues(readmodel.AppliedObject(rec)))
	}
	if b != nil {
		for i := range b.Overrides {
			d.Overrides = append(d.Overrides, render.PolicyName(&b.Overrides[i]))
		}
	}
	if !t.Placement.DecidedAt.IsZero() || t.Placement.Error != "" {
		var buf bytes.Buffer
		readmodel.WriteExplanation(&buf, t.Placement, snap.fleet)
		d.Explanation = buf.String()
	}
	regs := map[string]events.ClusterRegistration{}
	for _, c := range snap.fleet.Clusters {
		regs[c.Registration.Name] = c.Registration
	}
	for _, ws := range t.Work {
		m := member{Cluster: ws.Cluster, Health: ws.Health, Replicas: t.Desired(ws), Ready: ws.ReadyReplicas, Overrides: ws.AppliedOverrides}
		m.Phase, m.Message = t.Phase(ws)
		if b != nil {
			m.Manifest = manifest(b, regs[ws.Cluster], ws.Cluster, t.Placement)
		}
		d.Members = append(d.Members, m)
	}
	history, err := s.src.History(r.Context(), key)
	if err != nil {
		d.HistoryError = err.Error()
	}
	d.Timeline = timeline(history)
	s.render(w, r, "workload", page{Title: key.Ref(), Nav: "workloads", Data: d, Live: true, ReadAt: snap.readAt})
}

// manifest is the template as executord renders it for cluster: the
// binding's overrides applied, the placement's replicas set.
func manifest(b *events.Binding, reg events.ClusterRegistration, cluster string, p events.PlacementDecision) string {
	var tpl map[string]any
	if err := json.Unmarshal(b.Template, &tpl); err != nil || tpl == nil {
		return ""
	}
	var replicas *int32
	for _, c := range p.Clusters {
		if c.Name == cluster && b.Replicas > 0 {
			n := c.Replicas
			replicas = &n
		}
	}
	obj, _, err := render.Render(tpl, render.Cluster{Name: cluster, Labels: reg.Labels, Spec: reg.Spec}, b.Overrides, replicas)
	if err != nil {
		return "# " + err.Error()
	}
	return toYAML(withoutSecretValues(obj))
}

// withoutSecretValues is obj with a Secret's values replaced by their
// sizes, as kubectl describe shows them: the console asks no login, and
// whoever may read a Secret's values reads them from the bus or a member.
func withoutSecretValues(obj map[string]any) map[string]any {
	if obj["apiVersion"] != "v1" || obj["kind"] != "Secret" {
		return obj
	}
	out := maps.Clone(obj)
	for _, field := range []string{"data", "stringData"} {
		values, ok := obj[field].(map[string]any)
		if !ok {
			continue
		}
		sizes := make(map[string]any, len(values))
		for k, v := range values {
			s, _ := v.(string)
			n := len(s)
			if field == "data" {
				n = base64.StdEncoding.DecodedLen(len(s)) - strings.Count(s, "=")
			}
			sizes[k] = fmt.Sprintf("(%d bytes, not shown)", n)
		}
		out[field] = sizes
	}
	return out
}

func toYAML(v any) string {
	out, err := yaml.Marshal(v)
	if err != nil {
		return "# " + err.Error()
	}
	return string(out)
}

type clusterData struct {
	clusterView
	Conditions []events.ClusterCondition
	Version    string
	Nodes      string
	Work       []clusterWork
	Object     string
}

type clusterWork struct {
	Ref, Link, Phase, Message string
	Replicas, Ready           int32
}

func (s *Server) cluster(w http.ResponseWriter, r *http.Request) {
	snap, err := s.read(r.Context())
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err)
		return
	}
	name := r.PathValue("name")
	for _, c := range snap.fleet.Clusters {
		if c.Registration.Name != name {
			continue
		}
		d := clusterData{clusterView: newClusterView(c, workloadsOn(snap)[name])}
		if c.Health != nil {
			d.Conditions = c.Health.Conditions
		}
		if cp := c.Capacity; cp != nil {
			d.Version, d.Nodes = cp.KubernetesVersion, fmt.Sprintf("%d/%d ready", cp.ReadyNodes, cp.Nodes)
		}
		for k, t := range snap.index {
			for _, ws := range t.Work {
				if ws.Cluster == name {
					phase, msg := t.Phase(ws)
					d.Work = append(d.Work, clusterWork{Ref: k.Ref(), Link: workloadLink(k), Phase: phase, Message: msg, Replicas: t.Desired(ws), Ready: ws.ReadyReplicas})
				}
			}
		}
		sort.Slice(d.Work, func(i, j int) bool { return d.Work[i].Ref < d.Work[j].Ref })
		d.Object = toYAML(readmodel.ClusterObject(c))
		s.render(w, r, "cluster", page{Title: name, Nav: "overview", Data: d, Live: true, ReadAt: snap.readAt})
		return
	}
	s.fail(w, r, http.StatusNotFound, fmt.Errorf("no member cluster %s", name))
}

// eventRow is one event of the events page.
type eventRow struct {
	Time, Stream, Subject, Type, ID, Source, Data string
	Sequence                                      uint64
	// Attributes: the CloudEvent's context attributes and extensions.
	Attributes []attribute
}

type attribute struct{ Name, Value string }

func newEventRow(e Event) eventRow {
	row := eventRow{Time: e.Time.UTC().Format("15:04:05.000"), Stream: e.Stream, Subject: e.Subject, Sequence: e.Sequence}
	if e.Err != nil {
		row.Type, row.Data = "<not a CloudEvent>", e.Err.Error()
		return row
	}
	row.Type, row.ID, row.Source = e.Event.Type(), e.Event.ID(), e.Event.Source()
	row.Attributes = []attribute{{"specversion", e.Event.SpecVersion()}, {"id", row.ID}, {"source", row.Source}, {"type", row.Type},
		{"subject", e.Event.Subject()}, {"time", e.Event.Time().UTC().Format(time.RFC3339Nano)}, {"datacontenttype", e.Event.DataContentType()}}
	for _, name := range slices.Sorted(maps.Keys(e.Event.Extensions())) {
		row.Attributes = append(row.Attributes, attribute{name, fmt.Sprint(e.Event.Extensions()[name])})
	}
	var data any
	if json.Unmarshal(e.Event.Data(), &data) == nil {
		if b, err := json.MarshalIndent(data, "", "  "); err == nil {
			row.Data = string(b)
		}
	}
	return row
}

type eventsData struct {
	Subject, Type string
	Rows          []eventRow
	Error         string
}

// recentEvents is how many events of each stream the events page starts with.
const recentEvents = 100

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	d := eventsData{Subject: r.URL.Query().Get("subject"), Type: r.URL.Query().Get("type")}
	es, err := s.src.Recent(r.Context(), recentEvents)
	if err != nil {
		d.Error = err.Error()
	}
	for i := len(es) - 1; i >= 0; i-- { // newest first, as the tail adds them
		if eventMatches(es[i], d.Subject, d.Type) {
			d.Rows = append(d.Rows, newEventRow(es[i]))
		}
	}
	s.render(w, r, "events", page{Title: "Events", Nav: "events", Data: d, ReadAt: time.Now()})
}

// eventMatches: the events page's filters, subject and type, each a
// substring ("" matches all).
func eventMatches(e Event, subject, typ string) bool {
	t := ""
	if e.Err == nil {
		t = e.Event.Type()
	}
	return strings.Contains(e.Subject, subject) && strings.Contains(t, typ)
}
