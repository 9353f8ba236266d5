package policyd

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
)

func TestMetricsCountOutcomesOnTheInjectedRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := NewHandler(&eventstest.Recorder{}, "t", zap.NewNop())
	h.metrics = newMetrics(reg)
	ctx := context.Background()
	_ = h.Handle(ctx, applied(t, deployment))
	_ = h.Handle(ctx, applied(t, policyDoc("match-all", "", 0)))
	_ = h.Handle(ctx, applied(t, "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: broken, namespace: default}\nspec: {}\n"))
	tests := []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"an accepted template is counted by its role", h.metrics.objects.WithLabelValues(events.RoleTemplate, "accepted"), 1},
		{"an accepted policy is counted by its role", h.metrics.objects.WithLabelValues(events.RolePolicy, "accepted"), 1},
		{"a rejected policy is counted as rejected", h.metrics.objects.WithLabelValues(events.RolePolicy, "rejected"), 1},
		{"the binding the policy made is counted", h.metrics.bindings.WithLabelValues("changed"), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := testutil.ToFloat64(tt.c); got != tt.want {
				t.Errorf("want %v, got %v", tt.want, got)
			}
		})
	}
	if n, err := testutil.GatherAndCount(reg, "flotilla_policy_objects_total", "flotilla_policy_bindings_total"); err != nil || n != 4 {
		t.Errorf("the registry holds %d series (%v), want 4", n, err)
	}
}
