package validation

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/internal/strictyaml"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	internalv1alpha1 "k8s.io/api/apiserverinternal/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	appsv1beta2 "k8s.io/api/apps/v1beta2"
	authenticationv1 "k8s.io/api/authentication/v1"
	authenticationv1alpha1 "k8s.io/api/authentication/v1alpha1"
	authenticationv1beta1 "k8s.io/api/authentication/v1beta1"
	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1alpha1 "k8s.io/api/certificates/v1alpha1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	eventsv1 "k8s.io/api/events/v1"
	eventsv1beta1 "k8s.io/api/events/v1beta1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta1 "k8s.io/api/flowcontrol/v1beta1"
	flowcontrolv1beta2 "k8s.io/api/flowcontrol/v1beta2"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	networkingv1 "k8s.io/api/networking/v1"
	networkingv1beta1 "k8s.io/api/networking/v1beta1"
	nodev1 "k8s.io/api/node/v1"
	nodev1alpha1 "k8s.io/api/node/v1alpha1"
	nodev1beta1 "k8s.io/api/node/v1beta1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1alpha1 "k8s.io/api/rbac/v1alpha1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	storagev1alpha1 "k8s.io/api/storage/v1alpha1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	storagemigrationv1beta1 "k8s.io/api/storagemigration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtins knows the Kubernetes built-in kinds: the same groups client-go's
// kubernetes/scheme registers, built here from k8s.io/api so that policyd
// does not pull in client-go for a type table.
var builtins = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	for _, add := range []func(*runtime.Scheme) error{
		admissionregistrationv1.AddToScheme, admissionregistrationv1alpha1.AddToScheme, admissionregistrationv1beta1.AddToScheme,
		internalv1alpha1.AddToScheme,
		appsv1.AddToScheme, appsv1beta1.AddToScheme, appsv1beta2.AddToScheme,
		authenticationv1.AddToScheme, authenticationv1alpha1.AddToScheme, authenticationv1beta1.AddToScheme,
		authorizationv1.AddToScheme, authorizationv1beta1.AddToScheme,
		autoscalingv1.AddToScheme, autoscalingv2.AddToScheme,
		batchv1.AddToScheme, batchv1beta1.AddToScheme,
		certificatesv1.AddToScheme, certificatesv1alpha1.AddToScheme, certificatesv1beta1.AddToScheme,
		coordinationv1.AddToScheme, coordinationv1alpha2.AddToScheme, coordinationv1beta1.AddToScheme,
		corev1.AddToScheme,
		discoveryv1.AddToScheme, discoveryv1beta1.AddToScheme,
		eventsv1.AddToScheme, eventsv1beta1.AddToScheme,
		extensionsv1beta1.AddToScheme,
		flowcontrolv1.AddToScheme, flowcontrolv1beta1.AddToScheme, flowcontrolv1beta2.AddToScheme, flowcontrolv1beta3.AddToScheme,
		networkingv1.AddToScheme, networkingv1beta1.AddToScheme,
		nodev1.AddToScheme, nodev1alpha1.AddToScheme, nodev1beta1.AddToScheme,
		policyv1.AddToScheme, policyv1beta1.AddToScheme,
		rbacv1.AddToScheme, rbacv1alpha1.AddToScheme, rbacv1beta1.AddToScheme,
		resourcev1.AddToScheme, resourcev1alpha3.AddToScheme, resourcev1beta1.AddToScheme, resourcev1beta2.AddToScheme,
		schedulingv1.AddToScheme, schedulingv1alpha3.AddToScheme, schedulingv1beta1.AddToScheme,
		storagev1.AddToScheme, storagev1alpha1.AddToScheme, storagev1beta1.AddToScheme,
		storagemigrationv1.AddToScheme, storagemigrationv1beta1.AddToScheme,
		lifecyclev1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err) // a programming error: the tables above are static
		}
	}
	return s
}()

// clusterScoped lists the cluster-scoped built-in kinds as group/Kind
// (the scheme does not record scope). Every other built-in is namespaced.
var clusterScoped = map[string]bool{
	"/Namespace": true, "/Node": true, "/PersistentVolume": true, "/ComponentStatus": true,
	"rbac.authorization.k8s.io/ClusterRole": true, "rbac.authorization.k8s.io/ClusterRoleBinding": true,
	"storage.k8s.io/StorageClass": true, "storage.k8s.io/CSIDriver": true, "storage.k8s.io/CSINode": true,
	"storage.k8s.io/VolumeAttachment": true, "storage.k8s.io/VolumeAttributesClass": true,
	"scheduling.k8s.io/PriorityClass": true,
	"node.k8s.io/RuntimeClass":        true,
	"networking.k8s.io/IngressClass":  true, "networking.k8s.io/IPAddress": true, "networking.k8s.io/ServiceCIDR": true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration":   true,
	"admissionregistration.k8s.io/MutatingWebhookConfiguration":     true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy":        true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicy":          true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicyBinding":   true,
	"certificates.k8s.io/CertificateSigningRequest":                 true,
	"certificates.k8s.io/ClusterTrustBundle":                        true,
	"flowcontrol.apiserver.k8s.io/FlowSchema":                       true,
	"flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration":       true,
	"resource.k8s.io/DeviceClass":                                   true,
	"resource.k8s.io/ResourceSlice":                                 true,
	"resource.k8s.io/DeviceTaintRule":                               true,
	"internal.apiserver.k8s.io/StorageVersion":                      true,
	"storagemigration.k8s.io/StorageVersionMigration":               true,
	"authentication.k8s.io/TokenReview":                             true,
	"authentication.k8s.io/SelfSubjectReview":                       true,
	"authorization.k8s.io/SubjectAccessReview":                      true,
	"authorization.k8s.io/SelfSubjectAccessReview":                  true,
	"authorization.k8s.io/SelfSubjectRulesReview":                   true,
	"policy/PodSecurityPolicy":                                      true,
}

// kindClass says which rules a document gets.
type kindClass int

const (
	classUnknown     kindClass = iota // a CRD: apiVersion, kind, metadata.name only
	classBuiltin                      // a Kubernetes built-in: strict against k8s.io/api
	classPropagation                  // (Cluster)PropagationPolicy
	classOverride                     // (Cluster)OverridePolicy
	classCluster                      // cluster.karmada.io Cluster
	classBinding                      // work.karmada.io (Cluster)ResourceBinding, leniently
	classQuota                        // policy.karmada.io FederatedResourceQuota
	classInterpreter                  // config.karmada.io ResourceInterpreterCustomization
)

type kindInfo struct {
	class      kindClass
	typ        reflect.Type // nil for classUnknown
	namespaced bool         // false for cluster-scoped kinds and kinds of unknown scope
}

// Karmada groups Flotilla interprets; other kinds in them are refused,
// since they would otherwise be propagated as if they were templates.
const (
	groupPolicy  = "policy.karmada.io"
	groupCluster = "cluster.karmada.io"
	groupWork    = "work.karmada.io"
	workVersion  = "work.karmada.io/v1alpha2"
)

// resolveKind finds the rules for apiVersion/kind. A non-empty field names
// what is wrong (apiVersion or kind) and reason says why.
func resolveKind(apiVersion, kind string) (info kindInfo, field, reason string) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return kindInfo{}, "apiVersion", fmt.Sprintf("invalid value %q: %v", apiVersion, err)
	}
	switch gv.Group {
	case groupPolicy:
		kinds := []string{policy.KindPropagationPolicy, policy.KindClusterPropagationPolicy, policy.KindOverridePolicy, policy.KindClusterOverridePolicy, policy.KindFederatedResourceQuota}
		if apiVersion != policy.PolicyAPIVersion {
			return kindInfo{}, "apiVersion", fmt.Sprintf("unsupported value %q: must be %s", apiVersion, policy.PolicyAPIVersion)
		}
		switch kind {
		case policy.KindPropagationPolicy:
			return kindInfo{classPropagation, reflect.TypeFor[policy.PropagationPolicy](), true}, "", ""
		case policy.KindClusterPropagationPolicy:
			return kindInfo{classPropagation, reflect.TypeFor[policy.PropagationPolicy](), false}, "", ""
		case policy.KindOverridePolicy:
			return kindInfo{classOverride, reflect.TypeFor[policy.OverridePolicy](), true}, "", ""
		case policy.KindClusterOverridePolicy:
			return kindInfo{classOverride, reflect.TypeFor[policy.OverridePolicy](), false}, "", ""
		case policy.KindFederatedResourceQuota:
			return kindInfo{classQuota, reflect.TypeFor[policy.FederatedResourceQuota](), true}, "", ""
		}
		return kindInfo{}, "kind", unsupportedKind(kind, apiVersion, kinds)
	case groupCluster:
		if apiVersion != policy.ClusterAPIVersion {
			return kindInfo{}, "apiVersion", fmt.Sprintf("unsupported value %q: must be %s", apiVersion, policy.ClusterAPIVersion)
		}
		if kind != policy.KindCluster {
			return kindInfo{}, "kind", unsupportedKind(kind, apiVersion, []string{policy.KindCluster})
		}
		return kindInfo{classCluster, reflect.TypeFor[policy.Cluster](), false}, "", ""
	case groupConfig:
		if apiVersion != policy.ConfigAPIVersion {
			return kindInfo{}, "apiVersion", fmt.Sprintf("unsupported value %q: must be %s", apiVersion, policy.ConfigAPIVersion)
		}
		if kind != policy.KindResourceInterpreterCustomization {
			return kindInfo{}, "kind", unsupportedKind(kind, apiVersion, []string{policy.KindResourceInterpreterCustomization})
		}
		return kindInfo{classInterpreter, reflect.TypeFor[policy.ResourceInterpreterCustomization](), false}, "", ""
	case groupWork:
		if apiVersion != workVersion {
			return kindInfo{}, "apiVersion", fmt.Sprintf("unsupported value %q: must be %s", apiVersion, workVersion)
		}
		switch kind {
		case "ResourceBinding":
			return kindInfo{classBinding, reflect.TypeFor[resourceBinding](), true}, "", ""
		case "ClusterResourceBinding":
			return kindInfo{classBinding, reflect.TypeFor[resourceBinding](), false}, "", ""
		}
		return kindInfo{}, "kind", unsupportedKind(kind, apiVersion, []string{"ResourceBinding", "ClusterResourceBinding"})
	}
	gvk := gv.WithKind(kind)
	if obj, err := builtins.New(gvk); err == nil {
		t := reflect.TypeOf(obj)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		return kindInfo{classBuiltin, t, !clusterScoped[gv.Group+"/"+kind]}, "", ""
	}
	if !builtins.IsGroupRegistered(gv.Group) {
		return kindInfo{class: classUnknown}, "", "" // a CRD: we cannot know its schema
	}
	if !builtins.IsVersionRegistered(gv) {
		var versions []string
		for _, v := range builtins.VersionsForGroupKind(schema.GroupKind{Group: gv.Group, Kind: kind}) {
			versions = append(versions, v.String())
		}
		if len(versions) == 0 {
			for _, v := range builtins.PrioritizedVersionsForGroup(gv.Group) {
				versions = append(versions, v.String())
			}
		}
		slices.Sort(versions)
		return kindInfo{}, "apiVersion", fmt.Sprintf("unsupported value %q: Kubernetes serves %s", apiVersion, strings.Join(versions, ", "))
	}
	var known []string
	for k := range builtins.KnownTypes(gv) {
		known = append(known, k)
	}
	slices.Sort(known)
	msg := fmt.Sprintf("unsupported value %q: no such kind in %s", kind, apiVersion)
	if s := strictyaml.Suggest(kind, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return kindInfo{}, "kind", msg
}

func unsupportedKind(kind, apiVersion string, kinds []string) string {
	return fmt.Sprintf("unsupported value %q: Flotilla supports %s of %s", kind, strings.Join(kinds, ", "), apiVersion)
}

// BuiltinKinds lists the kinds of the Kubernetes built-in groups (each
// once, sorted), for the CLI to tell a kind with no templates from a word
// that names no kind.
func BuiltinKinds() []string {
	seen := map[string]bool{}
	for gvk := range builtins.AllKnownTypes() {
		if gvk.Version != "" && !strings.HasSuffix(gvk.Kind, "List") && !strings.HasSuffix(gvk.Kind, "Options") && !metaKinds[gvk.Kind] {
			seen[gvk.Kind] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// metaKinds are API machinery kinds the scheme registers with the core
// group, never objects anyone applies.
var metaKinds = map[string]bool{"Status": true, "WatchEvent": true, "APIGroup": true, "APIVersions": true, "APIResourceList": true,
	"Table": true, "PartialObjectMetadata": true, "InternalEvent": true}

// ClusterScopedKind reports whether kind is a cluster-scoped built-in kind
// (in any group).
func ClusterScopedKind(kind string) bool {
	for k := range clusterScoped {
		if _, name, _ := strings.Cut(k, "/"); name == kind {
			return true
		}
	}
	return false
}

// UnknownKind reports whether apiVersion/kind names no kind Flotilla knows
// (neither Karmada's nor a Kubernetes built-in: a custom resource, or a
// typo such as app/v1), and, when kind is a built-in kind, the apiVersions
// that serve it, as a suggestion. A CustomResourceDefinition
// (apiextensions.k8s.io/v1) is known: every API server serves it, though
// k8s.io/api does not carry its type.
func UnknownKind(apiVersion, kind string) (unknown bool, suggest []string) {
	if apiVersion == "apiextensions.k8s.io/v1" && kind == "CustomResourceDefinition" {
		return false, nil
	}
	info, field, _ := resolveKind(apiVersion, kind)
	if field != "" || info.class != classUnknown {
		return false, nil
	}
	for gvk := range builtins.AllKnownTypes() {
		if gvk.Kind == kind && gvk.Version != "" {
			suggest = append(suggest, gvk.GroupVersion().String())
		}
	}
	slices.Sort(suggest)
	return true, slices.Compact(suggest)
}

// Unappliable says why an object of apiVersion/kind may not be applied
// ("" when it may): a work.karmada.io (Cluster)ResourceBinding is a
// placement schedulerd decides, which `flotilla get placements -o yaml`
// prints in Karmada's shape and `flotilla simulate` reads; applied, it
// would become a template of its own and be propagated.
func Unappliable(apiVersion, kind string) string {
	if group, _, _ := strings.Cut(apiVersion, "/"); group == groupWork {
		return kind + " is a placement Flotilla decides (flotilla get placements shows them); it is not applied: apply the template and its policy instead"
	}
	return ""
}
