package hubd

import "github.com/prometheus/client_golang/prometheus"

// metrics are hubd's own figures; the bus counts the events it publishes
// (flotilla_events_published_total).
type metrics struct {
	// inputs: hub objects looked at, by outcome (published, deleted,
	// sealed, unchanged, refused, skipped).
	inputs *prometheus.CounterVec
	// writeBacks: write-back rounds, by result (ok, failed).
	writeBacks *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		inputs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_hub_inputs_total", Help: "Hub objects hubd looked at, by outcome (published, deleted, sealed, unchanged, refused, skipped).",
		}, []string{"outcome"}),
		writeBacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_hub_writebacks_total", Help: "Rounds writing the bus's state back to the hub, by result (ok, failed).",
		}, []string{"result"}),
	}
	if reg != nil {
		reg.MustRegister(m.inputs, m.writeBacks)
	}
	return m
}
