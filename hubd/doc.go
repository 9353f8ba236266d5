// Package hubd mirrors a hub (any kube-apiserver holding Flotilla's CRDs)
// onto the bus and writes the bus's state back to it, so that kubectl,
// Helm, Argo CD or Flux drive Flotilla as they drive Karmada's API server
// (docs/hub.md). It is the CLI's apply and delete verbs driven by a watch:
// it publishes the same events they publish, built the same way, and
// reads back through the read model `flotilla get` uses, so the hub and
// `flotilla get` agree. It imports no daemon (DESIGN.md decision 27).
//
//	Consumes (hub)   templates in the watched namespaces, policies, Clusters
//	                 (client-go informers)
//	Consumes (bus)   the read model: accepted objects, rejections, bindings,
//	                 placements, work, members, health (read every Interval)
//	Produces (bus)   object.applied, object.deleted on flotilla.input.<key>
//	Produces (hub)   template .status, ResourceBindings, Clusters and their
//	                 .status, policy conditions, Warning Events
//	Metrics          flotilla_hub_inputs_total{outcome},
//	                 flotilla_hub_writebacks_total{result}
//	State            none of its own: the hub's informer caches and the bus;
//	                 on start a deletion missed while it was down is
//	                 published (reconcileDeletions)
package hubd
