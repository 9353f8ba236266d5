package policy

import (
	"strings"
	"testing"
)

// FuzzParseDetectionRule parses arbitrary failure-detection rules (the
// seed-002 grammar, from policy YAML): it never panics, a refused rule has
// a reason, and an accepted one has a threshold in range.
func FuzzParseDetectionRule(f *testing.F) {
	for _, r := range []string{"PodUnavailable > 30%", "API-Server-Timeout > 3min", "API-Server-Timeout >= 90s", "PodUnavailable >= 100%",
		"PodUnavailable > 101%", "API-Server-Timeout > 0s", "API-Server-Timeout > 1e309h", "x", "", "PodUnavailable > 30.5%", "API-Server-Timeout > 5m"} {
		f.Add(r, strings.HasPrefix(r, "Pod"))
	}
	f.Fuzz(func(t *testing.T, rule string, application bool) {
		spec, reason := ParseDetectionRule(rule, application)
		if reason != "" {
			return
		}
		switch spec.Metric {
		case MetricPodUnavailable:
			if spec.Percent < 0 || spec.Percent > 100 {
				t.Fatalf("%q accepted with %v%%", rule, spec.Percent)
			}
		case MetricAPIServerTimeout:
			if spec.Duration <= 0 {
				t.Fatalf("%q accepted with duration %v", rule, spec.Duration)
			}
		default:
			t.Fatalf("%q accepted with metric %q", rule, spec.Metric)
		}
	})
}
