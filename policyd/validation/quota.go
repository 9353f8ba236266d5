package validation

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/flotilla/events/policy"
)

// quotaNameMaxLength is Karmada's limit on a FederatedResourceQuota's
// name (its webhook: a quota is mirrored into member ResourceQuotas).
const quotaNameMaxLength = 63

// standardQuotaNames are the resource names a Kubernetes ResourceQuota
// accepts without a "/" (apimachinery's IsStandardQuotaResourceName);
// hugepages-* and requests.hugepages-* are checked by prefix.
var standardQuotaNames = map[string]bool{
	"pods": true, "services": true, "replicationcontrollers": true, "resourcequotas": true, "secrets": true,
	"configmaps": true, "persistentvolumeclaims": true, "services.nodeports": true, "services.loadbalancers": true,
	"cpu": true, "memory": true, "ephemeral-storage": true, "storage": true,
	"requests.cpu": true, "requests.memory": true, "requests.storage": true, "requests.ephemeral-storage": true,
	"limits.cpu": true, "limits.memory": true, "limits.ephemeral-storage": true,
}

// checkQuota applies Karmada's FederatedResourceQuota webhook
// (reference features §4.1). Unlike most webhook rules these are errors:
// a quota that Karmada refuses would otherwise limit nothing the user
// can see.
func checkQuota(obj map[string]any, name string, rep *report) {
	var q policy.FederatedResourceQuota
	if !decode(obj, &q, "", rep) {
		return
	}
	if len(name) > quotaNameMaxLength {
		rep.errorf("metadata.name", "invalid value %q: %s", name, kvalidation.MaxLenError(quotaNameMaxLength))
	}
	if spec := mapAt(obj, "spec"); spec == nil || spec["overall"] == nil {
		rep.required("spec.overall")
	}
	checkQuotaList(q.Spec.Overall, "spec.overall", rep)
	sums := corev1.ResourceList{}
	for i, a := range q.Spec.StaticAssignments {
		ap := idx("spec.staticAssignments", i)
		if a.ClusterName == "" {
			rep.required(ap + ".clusterName")
		} else {
			for _, msg := range maxLength(clusterNameMaxLength, kvalidation.IsDNS1123Label)(a.ClusterName) {
				rep.errorf(ap+".clusterName", "invalid value %q: %s", a.ClusterName, msg)
			}
		}
		checkQuotaList(a.Hard, ap+".hard", rep)
		for _, n := range sortedNames(a.Hard) {
			if _, ok := q.Spec.Overall[n]; !ok {
				rep.errorf(ap+".hard["+string(n)+"]", "assignment resourceName is not exist in overall")
			}
			cur := sums[n]
			cur.Add(a.Hard[n])
			sums[n] = cur
		}
	}
	for _, n := range sortedNames(sums) {
		sum := sums[n]
		if limit, ok := q.Spec.Overall[n]; ok && limit.Cmp(sum) < 0 {
			rep.errorf("spec.overall["+string(n)+"]", "overall is less than assignments: %s < %s (the sum of spec.staticAssignments[*].hard[%s])", limit.String(), sum.String(), n)
		}
	}
	checkQuotaList(q.Status.Overall, "status.overall", rep)
	checkQuotaList(q.Status.OverallUsed, "status.overallUsed", rep)
	for i, s := range q.Status.AggregatedStatus {
		sp := idx("status.aggregatedStatus", i)
		checkQuotaList(s.Hard, sp+".hard", rep)
		checkQuotaList(s.Used, sp+".used", rep)
	}
}

// checkQuotaList checks a quota's resource names and quantities.
func checkQuotaList(l corev1.ResourceList, p string, rep *report) {
	for _, n := range sortedNames(l) {
		fp := p + "[" + string(n) + "]"
		for _, msg := range kvalidation.IsQualifiedName(string(n)) {
			rep.errorf(fp, "invalid resource name %q: %s", n, msg)
		}
		if !strings.Contains(string(n), "/") && !standardQuotaName(string(n)) {
			rep.errorf(fp, "invalid resource name %q: must be a standard resource for quota (cpu, memory, ephemeral-storage, pods, requests.*, limits.*, hugepages-*, ...) or contain \"/\"", n)
		}
		if q := l[n]; q.Sign() < 0 {
			rep.errorf(fp, "invalid value %q: must be greater than or equal to 0", q.String())
		}
	}
}

func standardQuotaName(n string) bool {
	return standardQuotaNames[n] || strings.HasPrefix(n, "hugepages-") || strings.HasPrefix(n, "requests.hugepages-")
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
