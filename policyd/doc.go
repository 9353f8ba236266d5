// Package policyd validates what users and external systems apply, keeps
// the accepted objects, matches resource templates to propagation and
// override policies the way Karmada does, and publishes the result.
//
//	Consumes  io.flotilla.object.applied.v1, io.flotilla.object.deleted.v1,
//	          io.flotilla.secret.sealed.v1,
//	          io.flotilla.reschedule.requested.v1         (FLOTILLA_INPUT, consumer policyd-input)
//	Produces  io.flotilla.object.accepted|removed|rejected.v1,
//	          io.flotilla.binding.changed|removed.v1,
//	          io.flotilla.cluster.registered|deregistered.v1   (FLOTILLA_POLICY)
//	State     the accepted objects, the last binding per template and the input
//	          sequence of each object's latest apply or deletion, rebuilt at
//	          start from FLOTILLA_POLICY (latest message per subject)
package policyd
