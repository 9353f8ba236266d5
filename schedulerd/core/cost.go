package core

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// divideCostOptimized is the CostOptimized division (seed 002): minimise
// Σ price × replicas within each cluster's capacity. With a price per
// replica that does not depend on how many replicas a cluster gets, that
// is filling the cheapest cluster up to its AvailableReplicas (free
// capacity plus what the binding runs there now, since the whole placement
// is recomputed), then the next cheapest, and so on; equal prices go by
// name. Clusters without prices come last, by name: their price is
// unknown, not zero. Fewer available replicas in total than desired is an
// error, as for the dynamic strategies.
func divideCostOptimized(req *framework.Request, cands []candidate, desired int64) ([]party, string, error) {
	rc := framework.NewReplicaCost(req.Binding, req.Placement)
	type offer struct {
		c      *candidate
		price  float64
		priced bool
	}
	offers := make([]offer, len(cands))
	var capacity int64
	for i := range cands {
		p, ok := cands[i].c.Prices()
		offers[i] = offer{c: &cands[i], price: rc.PerReplica(p), priced: ok}
		capacity += cands[i].avail
	}
	slices.SortFunc(offers, func(a, b offer) int {
		switch {
		case a.priced != b.priced:
			if a.priced {
				return -1
			}
			return 1
		case a.price < b.price:
			return -1
		case a.price > b.price:
			return 1
		}
		return cmp.Compare(a.c.name(), b.c.name())
	})
	if capacity < desired {
		return nil, "CostOptimized: " + strconv.FormatInt(desired, 10) + " replicas to place, clusters can take " + strconv.FormatInt(capacity, 10),
			fmt.Errorf("Clusters available replicas %d are not enough to schedule %d replicas.", capacity, desired)
	}
	var parts []party
	var sb strings.Builder
	sb.WriteString("CostOptimized: ")
	sb.WriteString(strconv.FormatInt(desired, 10))
	sb.WriteString(" replicas on the cheapest clusters first (price per replica, capacity)")
	remaining := desired
	for _, o := range offers {
		if remaining == 0 {
			break
		}
		give := min(remaining, o.c.avail)
		if give <= 0 {
			continue
		}
		remaining -= give
		parts = append(parts, party{name: o.c.name(), seats: give, rank: o.c.rank})
		if len(parts) <= 12 {
			sb.WriteString(" ")
			sb.WriteString(o.c.name())
			sb.WriteString("=")
			sb.WriteString(strconv.FormatInt(give, 10))
			sb.WriteString(" at ")
			if o.priced {
				sb.WriteString(formatMoney(o.price))
			} else {
				sb.WriteString("no price")
			}
			sb.WriteString(" (capacity ")
			sb.WriteString(strconv.FormatInt(o.c.avail, 10))
			sb.WriteString(")")
		}
	}
	if len(parts) > 12 {
		sb.WriteString(" ... " + strconv.Itoa(len(parts)-12) + " more clusters")
	}
	return parts, sb.String(), nil
}

// costOf prices a placement: Σ replicas × per-replica price over the
// priced clusters it uses, and appends it to the division line when any
// replica landed on a priced cluster (with a note on replicas whose
// clusters have no price).
func costOf(req *framework.Request, selected []candidate, targets []events.TargetCluster, division string) (float64, string) {
	var anyPriced bool
	for i := range selected {
		if _, ok := selected[i].c.Prices(); ok {
			anyPriced = true
			break
		}
	}
	if !anyPriced || len(targets) == 0 {
		return 0, division
	}
	byName := make(map[string]*framework.ClusterInfo, len(selected))
	for i := range selected {
		byName[selected[i].name()] = selected[i].c
	}
	rc := framework.NewReplicaCost(req.Binding, req.Placement)
	var cost float64
	var priced, unpriced int64
	for _, t := range targets {
		c := byName[t.Name]
		if c == nil {
			continue
		}
		p, ok := c.Prices()
		if !ok {
			unpriced += int64(t.Replicas)
			continue
		}
		priced += int64(t.Replicas)
		cost += float64(t.Replicas) * rc.PerReplica(p)
	}
	if priced == 0 {
		return 0, division
	}
	division += "; cost per hour " + formatMoney(cost)
	if unpriced > 0 {
		division += " (" + strconv.FormatInt(unpriced, 10) + " replicas on clusters without prices not counted)"
	}
	return cost, division
}

// formatMoney prints an amount with up to 4 decimals, without trailing zeros.
func formatMoney(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
