package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// summarize says in one line what an event of any type in the catalogue
// is: what was applied, accepted or refused and why, where a workload went
// and why, what a cluster or a member reported, what a dead letter gave up
// on and why. An event whose data does not decode says so.
func summarize(e events.Event) string {
	var s string
	var err error
	decode := func(into any) bool {
		err = events.Decode(e, into)
		return err == nil
	}
	switch events.Type(e.Type()) {
	case events.TypeObjectApplied, events.TypeObjectDeleted, events.TypeRescheduleRequested:
		var o struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct{ Name, Namespace string }
		}
		if decode(&o) {
			verb := map[events.Type]string{events.TypeObjectApplied: "apply", events.TypeObjectDeleted: "delete", events.TypeRescheduleRequested: "reschedule"}[events.Type(e.Type())]
			s = verb + " " + events.KeyOf(o.APIVersion, o.Kind, o.Metadata.Namespace, o.Metadata.Name).Ref()
		}
	case events.TypeSecretSealed:
		var x events.SealedSecret
		if decode(&x) {
			keys := make([]string, 0, len(x.Data))
			for k := range x.Data {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			s = fmt.Sprintf("secret %s/%s sealed to key %s (%s)", x.Namespace, x.Name, x.KeyID, strings.Join(keys, ", "))
		}
	case events.TypeObjectAccepted, events.TypeObjectRemoved:
		var r events.ObjectRecord
		if decode(&r) {
			s = fmt.Sprintf("%s %s, generation %d", r.Role, r.Key.Ref(), r.Generation)
			if events.Type(e.Type()) == events.TypeObjectRemoved {
				s = r.Key.Ref() + " removed"
			} else if len(r.Warnings) > 0 {
				s += ", warnings: " + strings.Join(r.Warnings, "; ")
			}
		}
	case events.TypeObjectRejected:
		var r events.Rejection
		if decode(&r) {
			var ps []string
			for _, p := range r.Problems {
				ps = append(ps, validation.Format(p))
			}
			s = r.Key.Ref() + " refused: " + strings.Join(ps, "; ")
		}
	case events.TypeBindingChanged, events.TypeBindingRemoved:
		var b events.Binding
		if decode(&b) {
			s = fmt.Sprintf("%s generation %d, revision %d", b.Key.Ref(), b.Generation, b.Revision)
			if b.Policy != nil {
				s += ", claimed by " + strings.ToLower(b.Policy.Kind) + "/" + b.Policy.Name
			}
			if events.Type(e.Type()) == events.TypeBindingRemoved {
				s = b.Key.Ref() + " unbound"
			}
		}
	case events.TypeClusterRegistered, events.TypeClusterDeregistered:
		var r events.ClusterRegistration
		if decode(&r) {
			s = fmt.Sprintf("%s registered (generation %d) at %s", r.Name, r.Generation, r.Spec.APIEndpoint)
			if events.Type(e.Type()) == events.TypeClusterDeregistered {
				s = r.Name + " deregistered"
			}
		}
	case events.TypeSealKeyPublished:
		var k events.SealKey
		if decode(&k) {
			s = "credentials key " + k.KeyID
		}
	case events.TypeClusterHealthChanged:
		var c events.ClusterHealth
		if decode(&c) {
			s = c.Cluster + " " + c.State
			if c.Message != "" {
				s += ": " + c.Message
			}
		}
	case events.TypeClusterHealthSnapshot:
		var h events.HealthSnapshot
		if decode(&h) {
			var cs []string
			for _, c := range h.Clusters {
				cs = append(cs, c.Cluster+" "+c.State)
			}
			s = fmt.Sprintf("%d cluster(s): %s", len(cs), strings.Join(cs, ", "))
		}
	case events.TypeClusterCapacityReported:
		var c events.ClusterCapacity
		if decode(&c) {
			s = fmt.Sprintf("%s %s, %d/%d nodes ready, cpu %s, memory %s allocatable", c.Cluster, c.KubernetesVersion, c.ReadyNodes, c.Nodes, c.Allocatable.Cpu(), c.Allocatable.Memory())
		}
	case events.TypePlacementDecided:
		var p events.PlacementDecision
		if decode(&p) {
			s = targetList(p.Clusters)
			if !p.Scheduled {
				s = "unschedulable: " + p.Error
			}
		}
	case events.TypePlacementRemoved:
		var p events.PlacementDecision
		if decode(&p) {
			s = p.Key.Ref() + " withdrawn"
		}
	case events.TypeWorkAssigned, events.TypeWorkUnassigned:
		var p events.PlacementDecision
		if decode(&p) {
			s = "assigned: " + targetList(p.Clusters)
			if len(p.Clusters) == 0 || events.Type(e.Type()) == events.TypeWorkUnassigned {
				s = p.Key.Ref() + " held no more"
			}
		}
	case events.TypeFailoverEvicted:
		var r events.FailoverRecord
		if decode(&r) {
			s = fmt.Sprintf("evicted from %s (%s: %s): %s -> %s", r.Eviction.Cluster, r.Eviction.Reason, r.Eviction.Message, targetList(r.From), targetList(r.To))
			if r.Error != "" {
				s += " (" + r.Error + ")"
			}
		}
	case events.TypeFailoverPurged:
		var r events.FailoverRecord
		if decode(&r) {
			s = fmt.Sprintf("old copy in %s released for deletion: %s", r.Eviction.Cluster, r.Eviction.PurgeReason)
		}
	case events.TypeWorkStatusChanged, events.TypeWorkDeleted:
		var w events.WorkStatus
		if decode(&w) {
			s = fmt.Sprintf("%s on %s: %s", w.Key.Ref(), w.Cluster, w.Phase)
			if w.Replicas > 0 {
				s += fmt.Sprintf(" %d/%d ready", w.ReadyReplicas, w.Replicas)
			}
			if w.Message != "" {
				s += ": " + w.Message
			}
		}
	case events.TypeEventDeadLettered:
		var dl events.DeadLetter
		if decode(&dl) {
			s = fmt.Sprintf("%s gave up on %s %d (%s): %s", dl.Consumer, dl.Stream, dl.Sequence, dl.Subject, dl.Reason)
		}
	default:
		return "unknown event type"
	}
	if err != nil {
		return "data does not decode: " + err.Error()
	}
	return s
}
