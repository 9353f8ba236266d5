// Package observetest reads metrics back in tests.
package observetest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Gauge returns the value of gauge name whose label has value (0 when no
// such series is registered).
func Gauge(t testing.TB, g prometheus.Gatherer, name, label, value string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}
