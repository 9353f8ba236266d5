package validation

import (
	"strings"
	"testing"
)

// Karmada v1.17-v1.19 placement between workloads: the webhook and CRD rules
// of workload affinity (reference features §1.1), schedule priority (§2.1)
// and FederatedResourceQuota (§4.1), one case per rule.

const quotaHead = `apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata:
  name: team
  namespace: team-a
spec:
`

func TestPlacementBetweenWorkloadsRules(t *testing.T) {
	tests := []struct {
		name string
		src  string
		errs []want
	}{
		{
			name: "§1.1 rule 1: a groupByLabelKey that is a label key is accepted, with a DNS prefix too",
			src: policyHead + `  placement:
    workloadAffinity:
      affinity: {groupByLabelKey: app.group}
      antiAffinity: {groupByLabelKey: example.com/tier}
`,
		},
		{
			name: "§1.1 rule 1: an affinity groupByLabelKey that is not a label key is refused at its path",
			src: policyHead + `  placement:
    workloadAffinity:
      affinity:
        groupByLabelKey: INVALID KEY!
`,
			errs: []want{{1, 14, "spec.placement.workloadAffinity.affinity.groupByLabelKey", `invalid value "INVALID KEY!"`}},
		},
		{
			name: "§1.1 rule 1: an empty antiAffinity groupByLabelKey is refused as required",
			src: policyHead + `  placement:
    workloadAffinity:
      antiAffinity:
        groupByLabelKey: ""
`,
			errs: []want{{1, 14, "spec.placement.workloadAffinity.antiAffinity.groupByLabelKey", "required value"}},
		},
		{
			name: "§1.1 rule 2: affinity and antiAffinity grouping by the same key are refused",
			src: policyHead + `  placement:
    workloadAffinity:
      affinity: {groupByLabelKey: app.group}
      antiAffinity: {groupByLabelKey: app.group}
`,
			errs: []want{{1, 12, "spec.placement.workloadAffinity", "affinity and antiAffinity must not use the same groupByLabelKey"}},
		},
		{
			name: "§2.1: schedulePriority with KubePriorityClass and a name is accepted",
			src:  policyHead + "  schedulePriority:\n    priorityClassSource: KubePriorityClass\n    priorityClassName: high\n",
		},
		{
			name: "§2.1: schedulePriority without priorityClassSource is refused (required by the CRD)",
			src:  policyHead + "  schedulePriority:\n    priorityClassName: high\n",
			errs: []want{{1, 11, "spec.schedulePriority.priorityClassSource", "required value"}},
		},
		{
			name: "§2.1: a priorityClassSource other than KubePriorityClass is refused (the CRD enum)",
			src:  policyHead + "  schedulePriority:\n    priorityClassSource: FederatedPriorityClass\n    priorityClassName: high\n",
			errs: []want{{1, 12, "spec.schedulePriority.priorityClassSource", `unsupported value "FederatedPriorityClass"`}},
		},
		{
			name: "§2.1: schedulePriority without priorityClassName is refused",
			src:  policyHead + "  schedulePriority:\n    priorityClassSource: KubePriorityClass\n",
			errs: []want{{1, 11, "spec.schedulePriority.priorityClassName", "required value"}},
		},
		{
			name: "§4.1: a quota with overall and static assignments within it is accepted",
			src: quotaHead + `  overall: {cpu: "4", memory: 8Gi, nvidia.com/gpu: "1", requests.cpu: "4", hugepages-2Mi: 1Gi}
  staticAssignments:
  - clusterName: member1
    hard: {cpu: "2", memory: 4Gi}
  - clusterName: member2
    hard: {cpu: "2"}
`,
		},
		{
			name: "§4.1: a quota without spec.overall is refused",
			src:  quotaHead + "  staticAssignments: []\n",
			errs: []want{{1, 6, "spec.overall", "required value"}},
		},
		{
			name: "§4.1: a quota name longer than 63 characters is refused",
			src:  "apiVersion: policy.karmada.io/v1alpha1\nkind: FederatedResourceQuota\nmetadata:\n  name: q" + strings.Repeat("a", 64) + "\n  namespace: a\nspec:\n  overall: {cpu: \"1\"}\n",
			errs: []want{{1, 4, "metadata.name", "must be no more than 63 characters"}},
		},
		{
			name: "§4.1: a resource name that is not a standard quota name and has no / is refused",
			src:  quotaHead + "  overall: {cpus: \"1\"}\n",
			errs: []want{{1, 7, "spec.overall[cpus]", "must be a standard resource for quota"}},
		},
		{
			name: "§4.1: a negative quantity is refused",
			src:  quotaHead + "  overall: {cpu: \"-1\"}\n",
			errs: []want{{1, 7, "spec.overall[cpu]", "must be greater than or equal to 0"}},
		},
		{
			name: "§4.1: a resource name in status is checked too",
			src:  quotaHead + "  overall: {cpu: \"1\"}\nstatus:\n  overallUsed: {bogus: \"1\"}\n",
			errs: []want{{1, 9, "status.overallUsed[bogus]", "must be a standard resource for quota"}},
		},
		{
			name: "§4.1: a staticAssignments clusterName that is not a valid cluster name is refused",
			src:  quotaHead + "  overall: {cpu: \"2\"}\n  staticAssignments:\n  - clusterName: Member_1\n    hard: {cpu: \"1\"}\n",
			errs: []want{{1, 9, "spec.staticAssignments[0].clusterName", `invalid value "Member_1"`}},
		},
		{
			name: "§4.1: a staticAssignments entry without clusterName is refused",
			src:  quotaHead + "  overall: {cpu: \"2\"}\n  staticAssignments:\n  - hard: {cpu: \"1\"}\n",
			errs: []want{{1, 9, "spec.staticAssignments[0].clusterName", "required value"}},
		},
		{
			name: "§4.1: assignments summing above overall are refused: overall is less than assignments",
			src:  quotaHead + "  overall: {cpu: \"2\"}\n  staticAssignments:\n  - clusterName: m1\n    hard: {cpu: \"2\"}\n  - clusterName: m2\n    hard: {cpu: 500m}\n",
			errs: []want{{1, 7, "spec.overall[cpu]", "overall is less than assignments: 2 < 2500m"}},
		},
		{
			name: "§4.1: an assignment of a resource overall does not limit is refused",
			src:  quotaHead + "  overall: {cpu: \"2\"}\n  staticAssignments:\n  - clusterName: m1\n    hard: {memory: 1Gi}\n",
			errs: []want{{1, 10, "spec.staticAssignments[0].hard[memory]", "assignment resourceName is not exist in overall"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := loadString(tt.src)
			checkProblems(t, "errors", res.Errors, tt.errs)
		})
	}
}
