package readmodel

import (
	"sort"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

// Cluster joins a member's registration with its health and capacity, as
// `flotilla get clusters` and `describe cluster` show it.
type Cluster struct {
	// Registration without its credentials.
	Registration events.ClusterRegistration `json:"registration"`
	// Health and Capacity: nil until healthd reports.
	Health   *events.ClusterHealth   `json:"health,omitempty"`
	Capacity *events.ClusterCapacity `json:"capacity,omitempty"`
	// JoinedAt: when the registration was stored.
	JoinedAt time.Time `json:"joinedAt"`
}

// Clusters joins the latest event of every member subject (events.AllMembers
// on events.StreamPolicy) with the latest health and capacity reports
// (events.AllHealth and events.AllCapacity on events.StreamHealth), in name
// order. Deregistered members, and reports of unregistered ones, are left
// out.
func Clusters(registrations, health []Stored) []Cluster {
	byName := map[string]*Cluster{}
	var names []string
	for _, m := range registrations {
		var r events.ClusterRegistration
		if !m.is(events.TypeClusterRegistered) || events.Decode(m.Event, &r) != nil {
			continue
		}
		r.Credentials = nil
		byName[r.Name] = &Cluster{Registration: r, JoinedAt: m.Time}
		names = append(names, r.Name)
	}
	for _, m := range health {
		if m.Err != nil {
			continue
		}
		switch events.Type(m.Event.Type()) {
		case events.TypeClusterHealthChanged:
			var h events.ClusterHealth
			if events.Decode(m.Event, &h) == nil && byName[h.Cluster] != nil {
				byName[h.Cluster].Health = &h
			}
		case events.TypeClusterCapacityReported:
			var c events.ClusterCapacity
			if events.Decode(m.Event, &c) == nil && byName[c.Cluster] != nil {
				byName[c.Cluster].Capacity = &c
			}
		}
	}
	sort.Strings(names)
	out := make([]Cluster, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out
}

// LostClusters maps every cluster whose latest health (events.AllHealth on
// events.StreamHealth) says it is lost (events.ClusterLost) to why, as
// "NotReady since 2026-12-01T14:00:00Z".
func LostClusters(health []Stored) map[string]string {
	lost := map[string]string{}
	for _, m := range health {
		var h events.ClusterHealth
		if m.Err == nil && events.Decode(m.Event, &h) == nil && events.ClusterLost(h.State) {
			lost[h.Cluster] = h.State + " since " + h.Since.UTC().Format(time.RFC3339)
		}
	}
	return lost
}

// ClusterKey is the key of the Cluster object that registers member name.
func ClusterKey(name string) events.ObjectKey {
	return events.ObjectKey{Group: "cluster.karmada.io", Kind: "Cluster", Name: name}
}
