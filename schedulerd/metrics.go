package schedulerd

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	decisions *prometheus.CounterVec
	members   *prometheus.GaugeVec
	// failover
	evictions         *prometheus.CounterVec
	purges            *prometheus.CounterVec
	evictionsDeferred prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_scheduler_decisions_total", Help: "Scheduling decisions, by result (scheduled, unschedulable, unchanged; ledger_moved: made again because another instance reserved capacity meanwhile).",
		}, []string{"result"}),
		members: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "flotilla_scheduler_cluster_ready", Help: "1 when the scheduler sees the member cluster Ready.",
		}, []string{"cluster"}),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_scheduler_evictions_total", Help: "Templates moved away from a cluster by failover, by reason.",
		}, []string{"reason"}),
		purges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_scheduler_purges_total", Help: "Evicted copies released for deletion, by reason.",
		}, []string{"reason"}),
		evictionsDeferred: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "flotilla_scheduler_evictions_deferred_total", Help: "Evictions put off by the eviction rate limit.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.decisions, m.members, m.evictions, m.purges, m.evictionsDeferred)
	}
	return m
}
