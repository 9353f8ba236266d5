// Package schedulerd places resource templates on member clusters. It keeps
// an immutable-per-decision snapshot of the members (registrations, health,
// capacity) and the live bindings, runs the pure scheduler core
// (schedulerd/core, plugins in schedulerd/plugins) and publishes a
// placement whenever the answer changes.
//
//	Consumes  io.flotilla.binding.changed|removed.v1,
//	          io.flotilla.cluster.registered|deregistered.v1,
//	          io.flotilla.object.accepted|removed.v1          (FLOTILLA_POLICY, consumer schedulerd-policy)
//	          io.flotilla.cluster.health.changed|snapshot.v1,
//	          io.flotilla.cluster.capacity.reported.v1         (FLOTILLA_HEALTH, consumer schedulerd-health)
//	          io.flotilla.work.status.changed.v1,
//	          io.flotilla.work.deleted.v1                      (FLOTILLA_WORK, consumer schedulerd-work)
//	Produces  io.flotilla.placement.decided|removed.v1,
//	          io.flotilla.failover.evicted|purged.v1            (FLOTILLA_PLACEMENT)
//	          io.flotilla.work.assigned|unassigned.v1, one per cluster a
//	          placement concerns                                (FLOTILLA_WORK)
//	          (object records: FederatedResourceQuotas only)
//	State     members, bindings (and each removed template's last binding
//	          revision), last placements, FederatedResourceQuotas
//	          and each template's work health per cluster, rebuilt at start
//	          from the streams (latest message per subject); the quota ledger
//	          and workload affinity peers follow from the placements;
//	          failover records the placements imply and the stream lacks are
//	          sent again; reservations of placed replicas are shared with
//	          the other instances in the KV bucket flotilla-ledger (one
//	          entry per cluster, compare-and-set; ledger.go)
package schedulerd
