// Package healthd watches member clusters: it probes each API server's
// /readyz on an interval (with the member's kubeconfig, or, when healthd
// holds none, anonymously at spec.apiEndpoint with the certificate
// verified), keeps a state machine per cluster with hysteresis
// (Tracker: one slow probe changes nothing but Suspect, recovery takes
// several good probes in a row), taints a lost cluster as Karmada does
// (TaintPolicy: NoSchedule at once, NoExecute after --no-execute-after),
// and reads capacity (allocatable and allocated cpu, memory, pods,
// nvidia.com/gpu from the member's Nodes and Pods; only with a kubeconfig).
//
//	Consumes  io.flotilla.cluster.registered|deregistered.v1 (FLOTILLA_POLICY, consumer healthd-members)
//	Produces  io.flotilla.cluster.health.changed.v1 (transitions only: state, reason or taints changed),
//	          io.flotilla.cluster.health.snapshot.v1 (every member, every --snapshot-interval),
//	          io.flotilla.cluster.capacity.reported.v1 (on change)     (FLOTILLA_HEALTH)
//	          io.flotilla.sealkey.published.v1 (at start; FLOTILLA_POLICY)
//	State     registrations (rebuilt from FLOTILLA_POLICY), probe state in memory,
//	          resumed at start from each cluster's last health event or its entry
//	          in the last snapshot, whichever is newer (FLOTILLA_HEALTH)
//
// Several instances share the members, one prober per cluster at a time
// (a lease per cluster, DESIGN.md §7): every instance follows every
// registration (the one in slot k>0 through healthd-members-<k>) and keeps
// a prober per cluster, which probes only while its instance holds the
// cluster's lease, resuming from the last transition stored; each
// instance's snapshot holds the clusters it probes.
//
// A lost cluster is NotReady or Unreachable after at worst
// failure-threshold × probe-interval + probe-timeout (Config.Detection,
// 8s with the defaults), and tainted NoExecute no-execute-after (300s)
// later. docs/failover.md explains the whole.
package healthd
