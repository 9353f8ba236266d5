package executord

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	applies      *prometheus.CounterVec
	drift        *prometheus.CounterVec
	heldRemovals *prometheus.GaugeVec
	heldApplies  *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{applies: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_executor_applies_total", Help: "Server-side applies sent to member clusters, by cluster.",
	}, []string{"cluster"}),
		drift: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_executor_drift_repaired_total", Help: "Member objects changed by hand and put back, by cluster.",
		}, []string{"cluster"}),
		heldRemovals: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "flotilla_executor_pending_removals", Help: "Removals held because the member cluster could not take them yet (it did not answer), retried until it does, by cluster.",
		}, []string{"cluster"}),
		heldApplies: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "flotilla_executor_pending_applies", Help: "Applies held because the member cluster could not take them yet, retried until it does, by cluster.",
		}, []string{"cluster"})}
	if reg != nil {
		reg.MustRegister(m.applies, m.drift, m.heldRemovals, m.heldApplies)
	}
	return m
}

// forget drops a cluster's held-operation gauges once its worker has
// stopped: nothing retries them any more.
func (m *metrics) forget(cluster string) {
	m.heldRemovals.DeleteLabelValues(cluster)
	m.heldApplies.DeleteLabelValues(cluster)
}
