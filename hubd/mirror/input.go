package mirror

import (
	"slices"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/readmodel"
)

// Labels and annotations hubd reads or writes on the hub.
const (
	// ManagedByLabel marks what hubd writes on the hub (bindings, the
	// Clusters of members joined with `flotilla join`): hubd reads none of
	// it back as input, so what it writes never comes back to the bus.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByHubd  = "flotilla-hubd"
	// lastApplied is kubectl's client-side apply record: the file, not the
	// object; a copy of it would reach every member.
	lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
)

// IsCredentials reports whether obj (an Input) is a Secret a Cluster
// names (credentials, keyed "<namespace>/<name>"): hubd publishes it
// sealed, never as a template.
func IsCredentials(obj map[string]any, credentials map[string]bool) bool {
	md, _ := obj["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	return obj["apiVersion"] == "v1" && obj["kind"] == "Secret" && credentials[ns+"/"+name]
}

// skippedResources are the resources (group/resource, "" group for core)
// hubd never treats as templates: what the API server and controllers make
// for themselves, and what hubd writes back (docs/hub.md lists them).
var skippedResources = []string{
	"/events", "events.k8s.io/events", "coordination.k8s.io/leases", "discovery.k8s.io/endpointslices", "/endpoints",
	"apiextensions.k8s.io/customresourcedefinitions", "apiregistration.k8s.io/apiservices",
	"work.karmada.io/resourcebindings", "work.karmada.io/clusterresourcebindings",
	"authorization.k8s.io/localsubjectaccessreviews", "/bindings", "/pods/binding",
}

// WatchedResource reports whether hubd watches group/resource for input.
func WatchedResource(group, resource string) bool {
	return !slices.Contains(skippedResources, group+"/"+resource)
}

// ClusterScopedInputs are the cluster-scoped kinds (apiVersion/Kind) hubd
// takes as input: Karmada's cluster-scoped policies, Clusters, and the
// cluster-scoped templates Karmada users propagate. Nodes, webhooks, API
// priority and fairness objects and the like describe the hub itself.
var ClusterScopedInputs = map[string]bool{
	policy.PolicyAPIVersion + "/" + policy.KindClusterPropagationPolicy: true,
	policy.PolicyAPIVersion + "/" + policy.KindClusterOverridePolicy:    true,
	policy.ClusterAPIVersion + "/" + policy.KindCluster:                 true,
	"v1/Namespace": true,
	"rbac.authorization.k8s.io/v1/ClusterRole":        true,
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": true,
	"storage.k8s.io/v1/StorageClass":                  true,
	"scheduling.k8s.io/v1/PriorityClass":              true,
	"node.k8s.io/v1/RuntimeClass":                     true,
	"networking.k8s.io/v1/IngressClass":               true,
}

// bootstrapped reports whether the API server made a cluster-scoped
// object for itself: the system: roles and bindings, the system-
// priority classes, the reserved namespaces (policy.ReservedNamespace)
// and default.
func bootstrapped(kind, name string, labels map[string]any) bool {
	return labels["kubernetes.io/bootstrapping"] != nil || strings.HasPrefix(name, "system:") ||
		(kind == "PriorityClass" && strings.HasPrefix(name, "system-")) ||
		(kind == "Namespace" && (policy.ReservedNamespace(name) || name == "default"))
}

// Input is what hubd publishes for the hub object obj, applied: what its
// users wrote (intent), with everything the server set stripped, as
// `flotilla apply` publishes the file it came from. skip says why obj is no input ("" when it is);
// credentials says obj is a Secret a Cluster names (sealed, never a
// template). watched says whether a namespace's templates are mirrored.
func Input(obj map[string]any, watched func(namespace string) bool, credentials map[string]bool) (out map[string]any, skip string) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	labels, _ := md["labels"].(map[string]any)
	switch {
	case labels[ManagedByLabel] == ManagedByHubd:
		return nil, "written by hubd"
	case ns == "" && !ClusterScopedInputs[apiVersion+"/"+kind]:
		return nil, "a cluster-scoped kind that describes the hub itself"
	case ns == "" && bootstrapped(kind, name, labels):
		return nil, "made by the API server for itself"
	case ns == "" && kind == "Namespace" && !watched(name):
		return nil, "namespace not watched"
	case kind == "Secret" && apiVersion == "v1" && credentials[ns+"/"+name]:
		// A Cluster names it: sealed (IsCredentials), in whatever
		// namespace it is.
	case policy.ReservedNamespace(ns):
		return nil, "a namespace Karmada reserves for itself"
	case ns != "" && !watched(ns):
		return nil, "namespace not watched"
	case kind == "Service" && apiVersion == "v1" && ns == "default" && name == "kubernetes":
		return nil, "the API server's own Service"
	case kind == "ConfigMap" && apiVersion == "v1" && name == "kube-root-ca.crt":
		return nil, "made by the hub's controllers"
	case kind == "Secret" && apiVersion == "v1" && obj["type"] == "kubernetes.io/service-account-token":
		return nil, "a service account token"
	case kind == "ServiceAccount" && apiVersion == "v1" && name == "default":
		return nil, "made by the hub's controllers"
	}
	out = deepCopy(intent(obj))
	readmodel.StripServerFields(out)
	omd, _ := out["metadata"].(map[string]any)
	if ann, ok := omd["annotations"].(map[string]any); ok {
		delete(ann, lastApplied)
		delete(ann, "deployment.kubernetes.io/revision")
		if len(ann) == 0 {
			delete(omd, "annotations")
		}
	}
	if kind == "Service" && apiVersion == "v1" {
		if spec, ok := out["spec"].(map[string]any); ok {
			delete(spec, "clusterIP")
			delete(spec, "clusterIPs")
		}
	}
	if kind == "Job" && strings.HasPrefix(apiVersion, "batch/") {
		stripGeneratedSelector(out)
	}
	if len(omd) == 0 {
		delete(out, "metadata")
	}
	return out, ""
}

// jobUIDLabels are the labels a Job's API server puts in the selector it
// generates and in the pod template, set to the Job's uid on that server.
var jobUIDLabels = []string{"batch.kubernetes.io/controller-uid", "controller-uid"}

// stripGeneratedSelector removes from a Job (unless it says
// manualSelector) the uid labels the hub generated, in its selector and
// pod template, as Karmada's detector prunes them. No writer owns them in
// managedFields, so intent leaves them out, but an object read whole (no
// managedFields) carries them, and a member's API server refuses a
// selector with another server's uid; each member generates its own.
func stripGeneratedSelector(job map[string]any) {
	spec, _ := job["spec"].(map[string]any)
	if spec == nil || spec["manualSelector"] == true {
		return
	}
	if sel, ok := spec["selector"].(map[string]any); ok {
		if ml, ok := sel["matchLabels"].(map[string]any); ok {
			for _, l := range jobUIDLabels {
				delete(ml, l)
			}
			if len(ml) == 0 {
				delete(sel, "matchLabels")
			}
		}
		if len(sel) == 0 {
			delete(spec, "selector")
		}
	}
	template, _ := spec["template"].(map[string]any)
	tmd, _ := template["metadata"].(map[string]any)
	labels, _ := tmd["labels"].(map[string]any)
	for _, l := range jobUIDLabels {
		delete(labels, l)
	}
	if labels != nil && len(labels) == 0 {
		delete(tmd, "labels")
	}
}

// Validate runs the validator `flotilla apply` runs on obj (an Input) and
// returns what apply would publish for it: seed spellings normalised
// (staticClusterWeight becomes staticWeightList), defaults applied,
// selectors given their namespace. problems are its errors: then nothing
// is published, as apply publishes nothing for a file with errors, and
// hubd reports them on the hub object instead.
func Validate(obj map[string]any) (out map[string]any, problems []events.FieldError) {
	doc, errs, _ := validation.ValidateObject(obj)
	if len(errs) > 0 {
		return nil, errs
	}
	return doc.Object, nil
}

// Key is the bus key of a hub object.
func Key(obj map[string]any) events.ObjectKey {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	return events.KeyOf(apiVersion, kind, ns, name)
}

// WatchedNamespaces returns the namespace filter hubd applies: the listed
// namespaces, or every namespace but flotilla-* ones when none is listed;
// never one Karmada reserves for itself (policy.ReservedNamespace: kube-*,
// karmada-system, karmada-cluster, karmada-es-*), where only the Secrets a
// Cluster names are read.
func WatchedNamespaces(listed []string) func(string) bool {
	if len(listed) > 0 {
		return func(ns string) bool { return slices.Contains(listed, ns) && !policy.ReservedNamespace(ns) }
	}
	return func(ns string) bool {
		return !policy.ReservedNamespace(ns) && !strings.HasPrefix(ns, "flotilla-")
	}
}

func deepCopy(v map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, x := range v {
		out[k] = copyValue(x)
	}
	return out
}

func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return deepCopy(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}
