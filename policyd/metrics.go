package policyd

import "github.com/prometheus/client_golang/prometheus"

// metrics are policyd's own figures; the bus counts the events it handles
// (flotilla_events_handled_total, consumer policyd-input).
type metrics struct {
	// objects: applied and deleted objects by role and outcome (accepted,
	// rejected, removed, superseded): both labels take a handful of values.
	objects *prometheus.CounterVec
	// bindings: bindings published, by change (changed, removed).
	bindings *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		objects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_policy_objects_total", Help: "Objects handled, by role (template, policy, override, cluster, credentials) and outcome (accepted, rejected, removed; superseded: a late redelivery ignored).",
		}, []string{"role", "outcome"}),
		bindings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_policy_bindings_total", Help: "Bindings published, by change (changed, removed).",
		}, []string{"change"}),
	}
	if reg != nil {
		reg.MustRegister(m.objects, m.bindings)
	}
	return m
}
