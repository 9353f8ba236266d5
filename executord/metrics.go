package executord

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	applies *prometheus.CounterVec
	drift   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{applies: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_executor_applies_total", Help: "Server-side applies sent to member clusters, by cluster.",
	}, []string{"cluster"}),
		drift: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_executor_drift_repaired_total", Help: "Member objects changed by hand and put back, by cluster.",
		}, []string{"cluster"})}
	if reg != nil {
		reg.MustRegister(m.applies, m.drift)
	}
	return m
}
