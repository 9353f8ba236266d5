// Package executord makes placements real: for every member cluster it
// serves it renders each placed template (replicas and overrides, see
// executord/render), creates the namespace when missing, applies it with
// server-side apply (field manager "flotilla"), deletes what a placement no
// longer puts there, and reports status per object and cluster, with the
// object's health as Karmada's default interpreter judges it (Interpret).
//
// A cluster a placement evicted keeps its copy while the eviction keeps it
// (not purged, purge mode not Directly; see disposition), and its work
// status says so. An apply or removal the member cannot take (it is down,
// times out, or is busy) is held and retried every resync interval with
// backoff until it is carried out or a later placement decides otherwise;
// the placement is acknowledged, never dead-lettered (held.go). A member's
// error ends the apply or not by its class (classify.go): a refusal of the
// manifest itself (422, 413, 400, an admission denial) ends it as Failed
// with reason events.WorkReasonRefused, and that manifest is not sent
// again until a new placement; a 403 (RBAC, a quota) is retried with a
// backoff of up to 5 minutes under phase Forbidden; anything else is
// retried as above.
//
// Failover statePreservation (Karmada's StatefulFailoverInjection,
// preserve.go): each work status of a template whose policy has
// statePreservation rules carries the rules' values read from the member
// object's status (PreservedState); a copy applied in a cluster that did
// not run the template before a failover gets the evictions' preserved
// values as labels (InjectPreservedLabels).
//
//	Consumes  io.flotilla.placement.decided|removed.v1 (push mode: FLOTILLA_PLACEMENT, consumer executord-<cluster>)
//	          io.flotilla.work.assigned|unassigned.v1 (pull mode: FLOTILLA_WORK, the cluster's assignments only, consumer executord-<cluster>)
//	          io.flotilla.cluster.registered|deregistered.v1 (push mode: FLOTILLA_POLICY, consumer executord-members)
//	Produces  io.flotilla.work.status.changed.v1, io.flotilla.work.deleted.v1 (FLOTILLA_WORK)
//	          io.flotilla.sealkey.published.v1 (push mode, at start; FLOTILLA_POLICY)
//	State     work records per cluster and template, rebuilt from FLOTILLA_WORK;
//	          the member objects themselves carry flotilla.io/applied-hash (and a
//	          placed template's flotilla.io/binding-revision: an older one is not
//	          applied over it, nor does it delete it);
//	          held operations in memory, derived again at start from the
//	          latest placements
//
// Push mode (default) serves every registered cluster with the kubeconfigs
// sealed in their registrations. Several push-mode instances share the
// clusters, one owner each at a time (a lease per cluster, DESIGN.md §7):
// every instance follows every registration (the instance in slot k>0
// through executord-members-<k>) and keeps a worker per cluster, but a
// worker acts only while its instance holds the cluster's lease; the
// others wait as hot standbys and take over when it lapses. Pull mode (--cluster NAME --kubeconfig FILE,
// or in-cluster credentials) serves one cluster with local credentials.
package executord
