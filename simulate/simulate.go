// Package simulate is the pure core of `flotilla simulate`: given Cluster
// objects, propagation and override policies, resource templates and
// (optionally) the ResourceBindings Karmada holds for them, it computes
// where each template would run and what would be applied there, without a
// bus, a daemon or a member cluster.
//
// It runs the daemons' own code: policyd's binding.Claim and binding.Build
// with policy.ApplicableOverrides decide which policy claims a template
// and which overrides apply, schedulerd's core with the default plugin
// profile places it, and executord's render package renders the manifest
// for every cluster. Each template is simulated on its own against the
// state given: no capacity is consumed by the other templates of the same
// run.
//
// What it adds to the daemons' code is speed, each fast path in its own
// file beside a test that holds it equal to the plain path, and kept for
// the figure docs/performance.md gives it: Load validates pieces of the
// input concurrently (load.go), claims are computed once per kind of
// template (claims.go), a manifest is rendered once per set of matching
// override rules (render.go), and WriteJSON encodes without reflection
// (encode.go, encode_value.go).
package simulate

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/executord/render"
	"github.com/flotilla-io/flotilla/policyd/binding"
	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/schedulerd/plugins"
)

// Report is the outcome of a simulation.
type Report struct {
	// Results has one entry per resource template, in input order.
	Results []Result `json:"results"`
	// Warnings are about the input as a whole (e.g. a ResourceBinding whose
	// template is not in the input); per-template warnings are in Result.
	Warnings []string `json:"-"`
}

// Result is the simulated outcome for one resource template.
type Result struct {
	Resource Resource `json:"resource"`
	// Policy is the propagation policy that claims the template; nil when
	// none matches.
	Policy    *PolicyRef `json:"policy"`
	Scheduled bool       `json:"scheduled"`
	// Clusters is the placement as Karmada's ResourceBinding would hold it
	// (spec.clusters), sorted by name. After a failure other than "no
	// cluster fits" it is the current placement given in the input (less
	// the clusters of its graceful eviction tasks), which Karmada keeps.
	Clusters []events.TargetCluster `json:"clusters"`
	// Feasible names the clusters that passed every filter, sorted.
	Feasible []string `json:"feasible"`
	// Diagnosis: every cluster filtered out -> "<Plugin>: <reason>" lines.
	Diagnosis map[string][]string `json:"diagnosis"`
	// Error says why the template is not scheduled; "" when it is.
	Error string `json:"error"`
	// Manifests: cluster -> the object as executord applies it there
	// (without the flotilla.io/applied-hash annotation executord adds when
	// it applies).
	Manifests map[string]map[string]any `json:"manifests"`
	// Overrides: cluster -> the override policies applied, in order
	// ("ClusterOverridePolicy/NAME", "OverridePolicy/NS/NAME").
	Overrides map[string][]string `json:"overrides"`
	// RenderErrors: cluster -> why the manifest could not be rendered (a
	// failing override; executord would report the work Failed). Absent
	// when every render succeeded.
	RenderErrors map[string]string `json:"renderErrors,omitempty"`
	// Warnings are the scheduler's warnings (e.g. a clusterAffinities
	// fallback); not part of the structured output.
	Warnings []string `json:"-"`

	// clusterNames are the names of every cluster of the input, sorted
	// (shared by every result): WriteJSON takes the diagnosis keys in that
	// order instead of sorting them.
	clusterNames []string
}

// Resource names a template.
type Resource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// PolicyRef names a PropagationPolicy or ClusterPropagationPolicy.
type PolicyRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Options tune a run.
type Options struct {
	// Workers is how many templates are simulated concurrently; 0 means
	// GOMAXPROCS. The result does not depend on it.
	Workers int
}

// Run simulates every resource template in docs (validated documents, as
// validation.Load returns them) with default options.
func Run(docs []validation.Document) (*Report, error) {
	return RunWith(docs, Options{})
}

// RunWith simulates every resource template in docs. It fails only when a
// document cannot be decoded into its Karmada type, which validation rules
// out for documents without errors.
func RunWith(docs []validation.Document, opt Options) (*Report, error) {
	w, err := newWorld(docs)
	if err != nil {
		return nil, err
	}
	rep := &Report{Results: make([]Result, len(w.templates)), Warnings: w.warnings}
	deferred := make([]*deferred, len(w.templates))
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(w.templates))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(w.templates) {
					return
				}
				rep.Results[i], deferred[i] = w.simulate(w.templates[i])
			}
		})
	}
	wg.Wait()
	w.decideInQueueOrder(rep.Results, deferred)
	return rep, nil
}

// world is the state every template is simulated against.
type world struct {
	sched     *core.Scheduler
	templates []*templateDoc
	policies  []binding.Candidate     // key order, as policyd passes them
	overrides []policy.OverridePolicy // key order
	clusters  *snapshot
	// ruleMatches: override policy (render.PolicyName) -> cluster index ->
	// which of its rules target the cluster, computed once.
	ruleMatches map[string][]string
	claims      *claims
	warnings    []string
	// priorityClasses: the value of every PriorityClass in the input.
	priorityClasses map[string]int32
	// interpreters: every ResourceInterpreterCustomization in the input.
	interpreters []policy.ResourceInterpreterCustomization
	// placed: the placements templates that share a quota or a workload
	// affinity group see (the input's ResourceBindings, then each decision
	// in queue order).
	placed *core.Placed
}

// templateDoc is one resource template and what the input says about its
// current binding.
type templateDoc struct {
	tmpl    *binding.Template
	binding *bindingDoc
}

func newWorld(docs []validation.Document) (*world, error) {
	w := &world{sched: core.New(plugins.DefaultProfile()), priorityClasses: map[string]int32{}, placed: core.NewPlaced()}
	var quotas []policy.FederatedResourceQuota
	credentials := policy.CredentialSecretsIn(validation.Objects(docs))
	byKey := map[events.ObjectKey]int{}
	var clusters []policy.Cluster
	clusterAt := map[string]int{}
	policies := map[events.ObjectKey]binding.Candidate{}
	overrides := map[events.ObjectKey]policy.OverridePolicy{}
	var bindings []*bindingDoc
	for _, d := range docs {
		key := events.KeyOf(d.APIVersion, d.Kind, d.Namespace, d.Name)
		switch {
		case d.APIVersion == workAPIVersion && (d.Kind == "ResourceBinding" || d.Kind == "ClusterResourceBinding"):
			b, err := decodeBinding(d)
			if err != nil {
				return nil, err
			}
			bindings = append(bindings, b)
			continue
		case d.Kind == "Secret" && d.APIVersion == "v1" && credentials[d.Namespace+"/"+d.Name]:
			continue // cluster credentials: never a template
		}
		switch events.RoleOf(d.APIVersion, d.Kind, d.Namespace) {
		case events.RolePolicy:
			var p policy.PropagationPolicy
			if err := decodeDoc(d, &p); err != nil {
				return nil, err
			}
			policies[key] = binding.Candidate{Key: key, Policy: p}
		case events.RoleOverride:
			var p policy.OverridePolicy
			if err := decodeDoc(d, &p); err != nil {
				return nil, err
			}
			overrides[key] = p
		case events.RoleCluster:
			var c policy.Cluster
			if err := decodeDoc(d, &c); err != nil {
				return nil, err
			}
			if c.Name == "" {
				c.Name = d.Name
			}
			if i, ok := clusterAt[c.Name]; ok {
				clusters[i] = c // a later document wins, as a later apply would
			} else {
				clusterAt[c.Name] = len(clusters)
				clusters = append(clusters, c)
			}
		case events.RoleInterpreter:
			var ric policy.ResourceInterpreterCustomization
			if err := decodeDoc(d, &ric); err != nil {
				return nil, err
			}
			w.interpreters = append(w.interpreters, ric)
		case events.RoleQuota:
			var q policy.FederatedResourceQuota
			if err := decodeDoc(d, &q); err != nil {
				return nil, err
			}
			quotas = append(quotas, q)
		case events.RoleTemplate:
			if v, ok := policy.PriorityClassValue(d.APIVersion, d.Kind, d.Object); ok {
				w.priorityClasses[d.Name] = v
			}
			// Record.Object (the template as JSON) is left empty: the
			// scheduler never reads it and the manifests are rendered from
			// the decoded object, which is what executord decodes it into.
			rec := events.ObjectRecord{Key: key, APIVersion: d.APIVersion, Role: events.RoleTemplate, Generation: 1}
			td := &templateDoc{tmpl: binding.NewTemplate(rec, d.Object)}
			if i, ok := byKey[key]; ok {
				w.templates[i] = td // a later document wins; the first position is kept
			} else {
				byKey[key] = len(w.templates)
				w.templates = append(w.templates, td)
			}
		}
	}
	for _, b := range bindings {
		i, ok := byKey[b.resource]
		if !ok && b.resource.Namespace == "" && b.namespace != "" {
			b.resource.Namespace = b.namespace
			i, ok = byKey[b.resource]
		}
		w.placed.Restore(&events.Binding{Key: b.resource, WorkloadAffinityGroups: b.groups}, b.previous)
		w.placed.Quotas.Record(b.resource, b.usage)
		if !ok {
			if b.groups == nil && b.usage == nil {
				w.warnings = append(w.warnings, fmt.Sprintf("%s: its resource %s is not in the input: ignored", b.label, b.resource))
			}
			continue
		}
		td := w.templates[i]
		td.binding = b
		if _, hasUID := metadataString(td.tmpl.Object, "uid"); !hasUID && b.uid != "" {
			td.tmpl.UID = b.uid // the binding records the template's uid
		}
	}
	for _, q := range quotas {
		// status.overallUsed, when given, is the usage before the input;
		// else it is counted from the bindings (nil).
		w.placed.Quotas.SetQuota(q, q.Status.OverallUsed)
	}
	w.policies = events.SortedByKey(policies)
	w.overrides = events.SortedByKey(overrides)
	w.claims = newClaims(w.policies, w.overrides)
	w.clusters = newSnapshot(clusters)
	w.ruleMatches = make(map[string][]string, len(w.overrides))
	for i := range w.overrides {
		p := &w.overrides[i]
		bits := make([]string, len(w.clusters.base))
		for ci := range w.clusters.base {
			bits[ci] = string(appendRuleBits(nil, p, w.clusters.byName[w.clusters.base[ci].Name]))
		}
		w.ruleMatches[render.PolicyName(p)] = bits
	}
	return w, nil
}

func decodeDoc(d validation.Document, into any) error {
	b, err := json.Marshal(d.Object)
	if err == nil {
		err = json.Unmarshal(b, into)
	}
	if err != nil {
		return fmt.Errorf("%s: %s %s: cannot decode: %w", d.Where(), d.Kind, d.Name, err)
	}
	return nil
}

func metadataString(obj map[string]any, field string) (string, bool) {
	md, _ := obj["metadata"].(map[string]any)
	s, _ := md[field].(string)
	return s, s != ""
}

// simulate claims, binds, schedules and renders one template; a template
// whose decision depends on others' (Placed.Involves) is only claimed and
// bound, and returned as deferred.
func (w *world) simulate(td *templateDoc) (Result, *deferred) {
	t := td.tmpl
	facts := t.Facts()
	res := Result{
		Resource: Resource{APIVersion: t.Record.APIVersion, Kind: t.Record.Key.Kind, Namespace: t.Record.Key.Namespace, Name: t.Record.Key.Name},
		Clusters: []events.TargetCluster{}, Feasible: []string{}, Diagnosis: map[string][]string{},
		Manifests: map[string]map[string]any{}, Overrides: map[string][]string{},
		clusterNames: w.clusters.names,
	}
	current := td.currentPolicy()
	c := w.claims.get(facts, current, func() *claim {
		cl := &claim{policy: binding.Claim(facts, current, w.policies)}
		if cl.policy != nil {
			cl.overrides = policy.ApplicableOverrides(facts, w.overrides)
		}
		return cl
	})
	claimed := c.policy
	if claimed == nil {
		res.Error = noPolicyError(facts)
		return res, nil
	}
	res.Policy = &PolicyRef{Kind: claimed.Key.Kind, Namespace: claimed.Key.Namespace, Name: claimed.Key.Name}
	b := binding.Build(t, claimed, c.overrides, w.priorityClass)
	if len(w.interpreters) > 0 {
		// Dependencies are not simulated: nothing is placed for them.
		binding.Interpret(&b, t, policy.Merge(w.interpreters, t.Record.APIVersion, t.Record.Key.Kind), false)
	}
	in := core.DecideInput{Binding: b, Snapshot: w.clusters.forBinding(&b)}
	if bd := td.binding; bd != nil {
		// The ResourceBinding is the current placement; its graceful
		// eviction tasks are kept evictions.
		in.Previous = &events.PlacementDecision{Clusters: bd.previous, AffinityName: bd.observedAffinity}
		in.Fresh = bd.fresh
		for _, c := range bd.evicted {
			in.Previous.Evictions = append(in.Previous.Evictions, events.Eviction{Cluster: c})
		}
	}
	if w.placed.Involves(&b) {
		// Shares a quota or a workload affinity group: decided later, one
		// at a time in queue order (decideInQueueOrder).
		return res, &deferred{binding: b, claim: c, in: in}
	}
	w.finish(td, &res, w.sched.Decide(in), &b, c)
	return res, nil
}

// finish fills a template's result from its placement and renders it.
func (w *world) finish(td *templateDoc, res *Result, p events.PlacementDecision, b *events.Binding, c *claim) {
	res.Scheduled, res.Error, res.Warnings = p.Scheduled, p.Error, p.Warnings
	if p.Feasible != nil {
		res.Feasible = p.Feasible
	}
	if p.Diagnosis != nil {
		res.Diagnosis = p.Diagnosis
	}
	if len(p.Clusters) > 0 {
		res.Clusters = slices.Clone(p.Clusters)
		slices.SortStableFunc(res.Clusters, func(a, b events.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	}
	w.renderAll(td.tmpl.Object, b, c, res)
}

func noPolicyError(r policy.ResourceFacts) string {
	where := "no ClusterPropagationPolicy"
	if r.Namespace != "" {
		where = "no PropagationPolicy in namespace " + r.Namespace + " and no ClusterPropagationPolicy"
	}
	return where + " matches " + r.APIVersion + " " + r.Kind + " " + r.Name + ": it is not propagated"
}
