package healthd

import (
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
)

type metrics struct {
	ready     *prometheus.GaugeVec
	noExecute *prometheus.GaugeVec
	probes    *prometheus.CounterVec
	snapshots prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "flotilla_cluster_ready", Help: "1 when healthd sees the member cluster Ready.",
		}, []string{"cluster"}),
		noExecute: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "flotilla_cluster_noexecute_tainted", Help: "1 while healthd taints the member cluster NoExecute.",
		}, []string{"cluster"}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_health_probes_total", Help: "Health probes, by cluster and result.",
		}, []string{"cluster", "result"}),
		snapshots: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "flotilla_health_snapshots_total", Help: "Health snapshots published.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.ready, m.noExecute, m.probes, m.snapshots)
	}
	return m
}

func (m *metrics) setHealth(h events.ClusterHealth) {
	m.ready.WithLabelValues(h.Cluster).Set(flag(h.Ready))
	noExecute := false
	for _, t := range h.Taints {
		noExecute = noExecute || t.Effect == corev1.TaintEffectNoExecute
	}
	m.noExecute.WithLabelValues(h.Cluster).Set(flag(noExecute))
}

func (m *metrics) forget(cluster string) {
	m.ready.DeleteLabelValues(cluster)
	m.noExecute.DeleteLabelValues(cluster)
	m.probes.DeletePartialMatch(prometheus.Labels{"cluster": cluster})
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
