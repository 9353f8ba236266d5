package healthd

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	ready  *prometheus.GaugeVec
	probes *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "flotilla_cluster_ready", Help: "1 when healthd sees the member cluster Ready.",
		}, []string{"cluster"}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_health_probes_total", Help: "Health probes, by cluster and result.",
		}, []string{"cluster", "result"}),
	}
	if reg != nil {
		reg.MustRegister(m.ready, m.probes)
	}
	return m
}
