package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWorkloadAffinityGroupRules(t *testing.T) {
	both := &WorkloadAffinity{Affinity: &WorkloadAffinityTerm{GroupByLabelKey: "app"}, AntiAffinity: &WorkloadAffinityTerm{GroupByLabelKey: "tier"}}
	tests := []struct {
		name       string
		wa         *WorkloadAffinity
		labels     map[string]string
		namespaced bool
		want       *WorkloadAffinityGroups
	}{
		{"§1.2 rule 2: no workloadAffinity in the policy gives no groups", nil, map[string]string{"app": "a"}, true, nil},
		{"§1.2 rule 3: a label the template has gives key=value for each term", both, map[string]string{"app": "a", "tier": "db"}, true,
			&WorkloadAffinityGroups{AffinityGroup: "app=a", AntiAffinityGroup: "tier=db"}},
		{"§1.2 rule 3: an empty label value counts", both, map[string]string{"app": ""}, true, &WorkloadAffinityGroups{AffinityGroup: "app="}},
		{"§1.2 rule 3: a label the template lacks gives that term no group", both, map[string]string{"tier": "db"}, true, &WorkloadAffinityGroups{AntiAffinityGroup: "tier=db"}},
		{"§1.2 rule 4: both groups empty gives no groups", both, map[string]string{"other": "x"}, true, nil},
		{"§1.2 rule 1: cluster-scoped templates never get groups", both, map[string]string{"app": "a"}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, GroupsOf(tt.wa, tt.labels, tt.namespaced)); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSchedulePriorityRules(t *testing.T) {
	classes := func(name string) (int32, bool) {
		if name == "high" {
			return 1000, true
		}
		return 0, false
	}
	tests := []struct {
		name       string
		sp         *SchedulePriority
		namespaced bool
		want       int32
		wantErr    string
	}{
		{"§2.2 rule 1: no schedulePriority gives priority 0", nil, true, 0, ""},
		{"§2.2 rule 2: KubePriorityClass gives the class's value", &SchedulePriority{PriorityClassSource: "KubePriorityClass", PriorityClassName: "high"}, true, 1000, ""},
		{"§2.2 rule 3: a missing class is an error (Karmada creates no binding)", &SchedulePriority{PriorityClassSource: "KubePriorityClass", PriorityClassName: "gone"}, true, 0,
			`PriorityClass "gone" named by spec.schedulePriority.priorityClassName does not exist`},
		{"§2.2 rule 3: another source is not supported yet", &SchedulePriority{PriorityClassSource: "FederatedPriorityClass", PriorityClassName: "high"}, true, 0,
			`priorityClassSource "FederatedPriorityClass" is not supported yet`},
		{"§2.2 rule 4: cluster-scoped templates always get 0", &SchedulePriority{PriorityClassSource: "KubePriorityClass", PriorityClassName: "gone"}, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SchedulePriorityOf(tt.sp, tt.namespaced, classes)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tt.want || gotErr != tt.wantErr {
				t.Errorf("got %d, %q; want %d, %q", got, gotErr, tt.want, tt.wantErr)
			}
		})
	}
}
