package readmodel

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// View is what a resource type lists: each is read from its own streams.
type View int

// The views a resource type names.
const (
	// ViewTemplates: resource templates (policyd's accepted records).
	ViewTemplates View = iota
	// ViewPolicies: propagation and override policies (policyd).
	ViewPolicies
	// ViewClusters: member clusters with health and capacity.
	ViewClusters
	// ViewWork: every template's work in every member (executord).
	ViewWork
	// ViewPlacements: schedulerd's decisions.
	ViewPlacements
	// ViewDeadLetters: events a consumer gave up on.
	ViewDeadLetters
	// ViewQuotas: FederatedResourceQuotas with their overallUsed.
	ViewQuotas
	// ViewInstances: the running daemon instances and what each owns.
	ViewInstances
)

// Resource is one resource type as the user typed it, resolved.
type Resource struct {
	View View
	// Kind is the kind word (as MatchesKind takes it) that narrows a
	// templates or policies view to one kind; "" is every one of the view.
	Kind string
	// Word is what the user typed.
	Word string
	// ClusterScoped: the kind's objects have no namespace.
	ClusterScoped bool
}

// Matches reports whether the object at key is of r (for the templates and
// policies views; every key matches the others).
func (r Resource) Matches(key events.ObjectKey) bool { return r.Kind == "" || MatchesKind(r.Kind, key) }

// Target is a resource type and the names given for it: none lists every
// object of the type.
type Target struct {
	Resource Resource
	Names    []string
}

// policyKinds are the policy kinds, as policyd keys them.
var policyKinds = []events.ObjectKey{
	{Group: "policy.karmada.io", Kind: "PropagationPolicy"}, {Group: "policy.karmada.io", Kind: "ClusterPropagationPolicy"},
	{Group: "policy.karmada.io", Kind: "OverridePolicy"}, {Group: "policy.karmada.io", Kind: "ClusterOverridePolicy"},
}

// Flotilla's own resource types and every word kubectl-style that names
// one (singular, plural, short name, with its group).
var flotillaWords = map[string]View{
	"cluster": ViewClusters, "clusters": ViewClusters, "cluster.cluster.karmada.io": ViewClusters, "clusters.cluster.karmada.io": ViewClusters,
	"policy": ViewPolicies, "policies": ViewPolicies,
	"template": ViewTemplates, "templates": ViewTemplates,
	"work": ViewWork, "works": ViewWork,
	"placement": ViewPlacements, "placements": ViewPlacements,
	"resourcebinding": ViewPlacements, "resourcebindings": ViewPlacements, "rb": ViewPlacements,
	"resourcebindings.work.karmada.io": ViewPlacements,
	// A binding and its placement are one row (Karmada's ResourceBinding
	// holds both).
	"binding": ViewPlacements, "bindings": ViewPlacements,
	"deadletter": ViewDeadLetters, "deadletters": ViewDeadLetters,
	"federatedresourcequota": ViewQuotas, "federatedresourcequotas": ViewQuotas, "frq": ViewQuotas,
	"instance": ViewInstances, "instances": ViewInstances,
	"federatedresourcequotas.policy.karmada.io": ViewQuotas, "federatedresourcequota.policy.karmada.io": ViewQuotas,
}

// ResourceWords are the resource types completion offers, one word each.
var ResourceWords = []string{"clusters", "policies", "propagationpolicies", "clusterpropagationpolicies", "overridepolicies",
	"clusteroverridepolicies", "federatedresourcequotas", "templates", "work", "placements", "deadletters", "instances", "deployments", "services", "configmaps",
	"secrets", "statefulsets", "daemonsets", "jobs", "cronjobs", "ingresses", "namespaces"}

// LookupResource resolves one resource type word, kubectl's way: Flotilla's
// types (clusters, policies, pp, cpp, op, cop, frq, work, placements,
// deadletters, templates), then any kind of template a built-in names or
// an accepted template has (known), or any word with a group (a custom
// resource's kind.group). Anything else is an error naming the types.
func LookupResource(word string, known []events.ObjectKey) (Resource, error) {
	lower := strings.ToLower(word)
	if v, ok := flotillaWords[lower]; ok {
		return Resource{View: v, Word: word}, nil
	}
	for _, k := range policyKinds {
		if MatchesKind(word, k) {
			return Resource{View: ViewPolicies, Kind: word, Word: word, ClusterScoped: strings.HasPrefix(k.Kind, "Cluster")}, nil
		}
	}
	if _, _, grouped := strings.Cut(word, "."); grouped && !strings.HasSuffix(lower, ".") {
		return Resource{View: ViewTemplates, Kind: word, Word: word}, nil
	}
	for _, k := range known {
		if MatchesKind(word, k) {
			return Resource{View: ViewTemplates, Kind: word, Word: word, ClusterScoped: k.Namespace == ""}, nil
		}
	}
	for _, k := range validation.BuiltinKinds() {
		if MatchesKind(word, events.ObjectKey{Kind: k}) {
			return Resource{View: ViewTemplates, Kind: word, Word: word, ClusterScoped: validation.ClusterScopedKind(k)}, nil
		}
	}
	return Resource{}, fmt.Errorf("the server doesn't have a resource type %q: want clusters, policies (pp, cpp, op, cop), federatedresourcequotas (frq), "+
		"templates, a kind of template (deployments, services, ...), work, placements or deadletters", word)
}

// ParseArgs reads kubectl's argument forms: TYPE, TYPE NAME..., TYPE/NAME...,
// TYPE1,TYPE2 and TYPE1,TYPE2 NAME... (each name of each type). known are
// the keys of the accepted templates, for kinds no built-in names
// (LookupResource). With bare set a lone NAME, not a type, is a template of
// any kind (explain's and describe's shortcut; Resolve says when two kinds
// share it). No argument at all is an error.
func ParseArgs(args []string, known []events.ObjectKey, bare bool) ([]Target, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("you must specify the type of resource: clusters, policies, templates, a kind, work, placements or deadletters")
	}
	if strings.Contains(args[0], "/") {
		var out []Target
		for _, a := range args {
			word, name, ok := strings.Cut(a, "/")
			if !ok || word == "" || name == "" || strings.Contains(name, "/") {
				return nil, fmt.Errorf("%q: want TYPE/NAME (e.g. deployment/my-app); TYPE/NAME and TYPE NAME cannot be mixed", a)
			}
			r, err := LookupResource(word, known)
			if err != nil {
				return nil, err
			}
			out = append(out, Target{Resource: r, Names: []string{name}})
		}
		return out, nil
	}
	first, _ := LookupResource(strings.Split(args[0], ",")[0], known)
	for _, a := range args[1:] {
		// work and placements take a template as KIND/NAME too.
		if strings.Contains(a, "/") && first.View != ViewWork && first.View != ViewPlacements {
			return nil, fmt.Errorf("%q: there is no need to give a resource type as a separate argument when passing arguments in TYPE/NAME form", a)
		}
	}
	var names []string
	if len(args) > 1 {
		names = args[1:]
	}
	var out []Target
	for _, word := range strings.Split(args[0], ",") {
		if word == "" {
			return nil, fmt.Errorf("%q: an empty resource type", args[0])
		}
		r, err := LookupResource(word, known)
		if err != nil {
			if bare && len(args) == 1 && !strings.Contains(args[0], ",") {
				return []Target{{Resource: Resource{View: ViewTemplates}, Names: []string{args[0]}}}, nil
			}
			return nil, err
		}
		out = append(out, Target{Resource: r, Names: names})
	}
	return out, nil
}

// Ref is the reference Resolve takes for name of t's type: KIND/NAME for a
// kind, NAME alone for a whole view.
func (t Target) Ref(name string) string {
	if t.Resource.Kind == "" {
		return name
	}
	return t.Resource.Kind + "/" + name
}

// ResolveRecords returns the accepted objects (templates and policies) t
// names in namespace, in the order of t.Names, each resolved with Resolve:
// a name that two kinds share is ambiguous only when t gives no kind. A
// name not found is an error saying so. allNamespaces looks in every
// namespace (then a name found in two namespaces is both).
func ResolveRecords(p Published, t Target, namespace string, allNamespaces bool) ([]events.ObjectRecord, error) {
	role := map[View]func(string) bool{
		ViewTemplates: func(r string) bool { return r == events.RoleTemplate },
		ViewPolicies:  func(r string) bool { return r == events.RolePolicy || r == events.RoleOverride },
		ViewClusters:  func(r string) bool { return r == events.RoleCluster },
	}[t.Resource.View]
	if role == nil {
		return nil, fmt.Errorf("%s names no template, policy or cluster", t.Resource.Word)
	}
	if t.Resource.View == ViewClusters {
		namespace, allNamespaces = "", false // cluster-scoped
	}
	var items []events.ObjectRecord
	for _, r := range p.SortedRecords() {
		if role(r.Role) && t.Resource.Matches(r.Key) {
			items = append(items, r)
		}
	}
	var out []events.ObjectRecord
	for _, name := range t.Names {
		if allNamespaces {
			found := false
			for _, r := range items {
				if r.Key.Name == name {
					out, found = append(out, r), true
				}
			}
			if !found {
				return nil, fmt.Errorf("%s not found in any namespace", t.Ref(name))
			}
			continue
		}
		noun := "templates"
		switch t.Resource.View {
		case ViewPolicies:
			noun = "policies"
		case ViewClusters:
			noun = "clusters"
		}
		r, err := Resolve(name, namespace, items, func(r events.ObjectRecord) events.ObjectKey { return r.Key }, noun)
		if errors.Is(err, ErrNotFound) && t.Resource.View == ViewClusters {
			return nil, fmt.Errorf("cluster %q not found", name)
		}
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("%s not found in namespace %s", t.Ref(name), namespace)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Known are the keys of the accepted templates, for ParseArgs.
func Known(p Published) []events.ObjectKey {
	var out []events.ObjectKey
	for _, r := range p.SortedRecords() {
		if r.Role == events.RoleTemplate {
			out = append(out, r.Key)
		}
	}
	return out
}

// Names are the names of the objects of r, for completion: members,
// templates or policies of its kind, placed templates.
func Names(f Fleet, r Resource) []string {
	var out []string
	switch r.View {
	case ViewClusters:
		for _, c := range f.Clusters {
			out = append(out, c.Registration.Name)
		}
	case ViewTemplates, ViewPolicies:
		for _, rec := range f.Published.SortedRecords() {
			isPolicy := rec.Role == events.RolePolicy || rec.Role == events.RoleOverride
			if isPolicy == (r.View == ViewPolicies) && (isPolicy || rec.Role == events.RoleTemplate) && r.Matches(rec.Key) {
				out = append(out, rec.Key.Name)
			}
		}
	case ViewWork, ViewPlacements:
		for _, p := range f.Decisions {
			out = append(out, p.Key.Name)
		}
	case ViewQuotas:
		for _, rec := range f.Published.SortedRecords() {
			if rec.Role == events.RoleQuota {
				out = append(out, rec.Key.Name)
			}
		}
	}
	return out
}
