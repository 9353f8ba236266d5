package validation

import (
	"github.com/flotilla-io/flotilla/internal/strictyaml"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation/path"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// nameRule checks a metadata.name and returns why it is not acceptable
// (nothing when it is), in apimachinery's words.
type nameRule func(name string) []string

// groupRBAC is the group whose names are path segments.
const groupRBAC = "rbac.authorization.k8s.io"

// clusterNameMaxLength is Karmada's limit on a Cluster's name (its
// webhook's ValidateClusterName), which leaves room for the names Karmada
// derives from it (execution namespaces karmada-es-<name>).
const clusterNameMaxLength = 48

// cronJobNameMaxLength is the API server's limit on a CronJob's name: the
// controller names each Job <name>-<11 characters>, and a Job's name must
// be a 63-character label.
const cronJobNameMaxLength = kvalidation.DNS1035LabelMaxLength - 11

// nameRuleOf returns the rule the API server applies to the name of an
// object of kind in apiVersion (info says which rules the kind gets):
//
//   - Namespace: a DNS-1123 label;
//   - Service: a DNS-1035 label (it becomes a DNS name in the cluster);
//   - Role, ClusterRole, RoleBinding, ClusterRoleBinding: a path segment
//     (anything but "", ".", "..", and names with "/" or "%");
//   - CronJob: a DNS-1123 subdomain of at most 52 characters;
//   - Karmada's Cluster: a DNS-1123 label of at most 48 characters;
//   - everything else, custom resources included: a DNS-1123 subdomain.
func nameRuleOf(info kindInfo, apiVersion, kind string) nameRule {
	if info.class == classCluster {
		return maxLength(clusterNameMaxLength, kvalidation.IsDNS1123Label)
	}
	if info.class != classBuiltin {
		return kvalidation.IsDNS1123Subdomain
	}
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		group = ""
	}
	switch {
	case group == "" && kind == "Namespace":
		return kvalidation.IsDNS1123Label
	case group == "" && kind == "Service":
		return kvalidation.IsDNS1035Label
	case group == groupRBAC && (kind == "Role" || kind == "ClusterRole" || kind == "RoleBinding" || kind == "ClusterRoleBinding"):
		return path.IsValidPathSegmentName
	case group == "batch" && kind == "CronJob":
		return maxLength(cronJobNameMaxLength, kvalidation.IsDNS1123Subdomain)
	}
	return kvalidation.IsDNS1123Subdomain
}

// maxLength tightens rule to names of at most n bytes.
func maxLength(n int, rule nameRule) nameRule {
	return func(name string) []string {
		if len(name) > n {
			return []string{kvalidation.MaxLenError(n)}
		}
		return rule(name)
	}
}

// checkName reports a metadata.name its kind's rule refuses. A missing
// name is checkMetadata's to report.
func checkName(name string, rule nameRule, rep *report) {
	if name == "" {
		return
	}
	for _, msg := range rule(name) {
		rep.errorf("metadata.name", "invalid value %q: %s", strictyaml.Truncate(name), msg)
	}
}
