package policy

// WorkloadAffinity is spec.placement.workloadAffinity (Karmada v1.17,
// reference features §1.1): hard constraints between workloads whose
// templates carry the same value of a label, the topology domain always
// one member cluster.
type WorkloadAffinity struct {
	// Affinity: workloads of one group run in the same clusters.
	Affinity *WorkloadAffinityTerm `json:"affinity,omitempty"`
	// AntiAffinity: workloads of one group never share a cluster.
	AntiAffinity *WorkloadAffinityTerm `json:"antiAffinity,omitempty"`
}

// WorkloadAffinityTerm names the template label whose value is the group.
type WorkloadAffinityTerm struct {
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// WorkloadAffinityGroups are a template's groups, as Karmada's
// ResourceBinding spec.workloadAffinityGroups holds them: each
// "<labelKey>=<labelValue>", "" for no group.
type WorkloadAffinityGroups struct {
	AffinityGroup     string `json:"affinityGroup,omitempty"`
	AntiAffinityGroup string `json:"antiAffinityGroup,omitempty"`
}

// GroupsOf derives a template's workload affinity groups from its policy's
// workloadAffinity and its labels (reference features §1.2): for each term
// present, "key=value" when the labels contain the key (an empty value
// counts), else no group. Cluster-scoped templates never get groups. nil
// when there is no group at all.
func GroupsOf(wa *WorkloadAffinity, labels map[string]string, namespaced bool) *WorkloadAffinityGroups {
	if wa == nil || !namespaced {
		return nil
	}
	var g WorkloadAffinityGroups
	group := func(t *WorkloadAffinityTerm) string {
		if t == nil {
			return ""
		}
		if v, ok := labels[t.GroupByLabelKey]; ok {
			return t.GroupByLabelKey + "=" + v
		}
		return ""
	}
	g.AffinityGroup, g.AntiAffinityGroup = group(wa.Affinity), group(wa.AntiAffinity)
	if g == (WorkloadAffinityGroups{}) {
		return nil
	}
	return &g
}
