package schedulerd

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	decisions *prometheus.CounterVec
	members   *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_scheduler_decisions_total", Help: "Scheduling decisions, by result (scheduled, unschedulable, unchanged).",
		}, []string{"result"}),
		members: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "flotilla_scheduler_cluster_ready", Help: "1 when the scheduler sees the member cluster Ready.",
		}, []string{"cluster"}),
	}
	if reg != nil {
		reg.MustRegister(m.decisions, m.members)
	}
	return m
}
