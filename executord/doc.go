// Package executord makes placements real: for every member cluster it
// serves it renders each placed template (replicas and overrides, see
// executord/render), creates the namespace when missing, applies it with
// server-side apply (field manager "flotilla"), deletes what a placement no
// longer puts there, and reports status per object and cluster.
//
//	Consumes  io.flotilla.placement.decided|removed.v1 (FLOTILLA_PLACEMENT, consumer executord-<cluster>)
//	          io.flotilla.cluster.registered|deregistered.v1 (push mode: FLOTILLA_POLICY, consumer executord-members)
//	Produces  io.flotilla.work.status.changed.v1, io.flotilla.work.deleted.v1 (FLOTILLA_WORK)
//	          io.flotilla.sealkey.published.v1 (push mode, at start)
//	State     work records per cluster and template, rebuilt from FLOTILLA_WORK;
//	          the member objects themselves carry flotilla.io/applied-hash
//
// Push mode (default) serves every registered cluster with the kubeconfigs
// sealed in their registrations. Pull mode (--cluster NAME --kubeconfig FILE,
// or in-cluster credentials) serves one cluster with local credentials.
package executord
