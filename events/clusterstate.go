package events

// Cluster states: ClusterHealth.State as healthd publishes it. One set of
// names for healthd (which decides them), schedulerd's failover (which acts
// on them) and the read model (which shows them).
const (
	// ClusterStateUnknown: healthd cannot judge the cluster yet (no probe has
	// answered, or no credentials to probe with).
	ClusterStateUnknown = "Unknown"
	// ClusterStateReady: the cluster's /readyz answers ok.
	ClusterStateReady = "Ready"
	// ClusterStateSuspect: recent probes failed, but fewer than the failure
	// threshold; the cluster still counts as ready.
	ClusterStateSuspect = "Suspect"
	// ClusterStateNotReady: the API server answers but reports itself not ready.
	ClusterStateNotReady = "NotReady"
	// ClusterStateUnreachable: the API server does not answer.
	ClusterStateUnreachable = "Unreachable"
)

// ClusterLost reports whether a cluster in state can neither run nor report
// its work: NotReady or Unreachable. Unknown (not judged yet) and Suspect
// (still ready) are not lost.
func ClusterLost(state string) bool {
	return state == ClusterStateNotReady || state == ClusterStateUnreachable
}
