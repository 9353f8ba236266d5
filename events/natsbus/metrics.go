package natsbus

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the bus-level Prometheus series every daemon exposes.
type Metrics struct {
	Published    *prometheus.CounterVec
	Handled      *prometheus.CounterVec
	Latency      *prometheus.HistogramVec
	DeadLettered *prometheus.CounterVec
}

// NewMetrics registers the bus metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_events_published_total", Help: "Events published, by type and outcome.",
		}, []string{"event_type", "outcome"}),
		Handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_events_handled_total", Help: "Events handled, by consumer, type and outcome (ack, retry, nak, deadletter).",
		}, []string{"consumer", "event_type", "outcome"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "flotilla_event_handling_seconds", Help: "Time to handle one event, by consumer and type.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"consumer", "event_type"}),
		DeadLettered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_events_deadlettered_total", Help: "Events sent to the dead-letter subject, by consumer.",
		}, []string{"consumer"}),
	}
	reg.MustRegister(m.Published, m.Handled, m.Latency, m.DeadLettered)
	return m
}

func (m *Metrics) published(typ, outcome string) {
	if m != nil {
		m.Published.WithLabelValues(typ, outcome).Inc()
	}
}

func (m *Metrics) handled(consumer, typ, outcome string, d time.Duration) {
	if m != nil {
		m.Handled.WithLabelValues(consumer, typ, outcome).Inc()
		m.Latency.WithLabelValues(consumer, typ).Observe(d.Seconds())
	}
}

func (m *Metrics) deadLettered(consumer string) {
	if m != nil {
		m.DeadLettered.WithLabelValues(consumer).Inc()
	}
}
