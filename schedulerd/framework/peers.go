package framework

// WorkloadPeers are the placements of the other workloads in a binding's
// workload affinity and anti-affinity groups (reference features §1.3):
// only peers in the binding's namespace, never the binding itself.
type WorkloadPeers struct {
	// AffinityPlaced counts the affinity peers that are placed (peers
	// with no clusters are ignored); AffinityIn counts, per cluster, how
	// many of them list it. A cluster every placed peer lists passes.
	AffinityPlaced int
	AffinityIn     map[string]int
	// AntiAffinityIn holds the clusters any anti-affinity peer lists.
	AntiAffinityIn map[string]struct{}
}

// AffinityAllows reports whether every placed affinity peer lists cluster
// (true when none is placed: the first of a group is unconstrained).
func (p *WorkloadPeers) AffinityAllows(cluster string) bool {
	return p == nil || p.AffinityPlaced == 0 || p.AffinityIn[cluster] == p.AffinityPlaced
}

// AntiAffinityAllows reports whether no anti-affinity peer lists cluster.
func (p *WorkloadPeers) AntiAffinityAllows(cluster string) bool {
	if p == nil {
		return true
	}
	_, taken := p.AntiAffinityIn[cluster]
	return !taken
}
