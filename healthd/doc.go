// Package healthd watches member clusters: it probes each API server's
// /readyz on an interval, keeps a small state machine per cluster so one
// slow probe changes nothing, and reads capacity (allocatable and allocated
// cpu, memory, pods, nvidia.com/gpu from the member's Nodes and Pods).
//
//	Consumes  io.flotilla.cluster.registered|deregistered.v1 (FLOTILLA_POLICY, consumer healthd-members)
//	Produces  io.flotilla.cluster.health.changed.v1 (transitions only),
//	          io.flotilla.cluster.capacity.reported.v1 (on change)     (FLOTILLA_HEALTH)
//	          io.flotilla.sealkey.published.v1 (at start)
//	State     registrations (rebuilt from FLOTILLA_POLICY), probe state in memory
package healthd
