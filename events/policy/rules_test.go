package policy

import (
	"strings"
	"testing"
	"time"
)

func TestParseDetectionRule(t *testing.T) {
	for _, tt := range []struct {
		name        string
		rule        string
		application bool
		percent     float64
		duration    time.Duration
		inclusive   bool
		bad         string // substring of the reason, "" when valid
	}{
		{name: "seed 002's application rule", rule: "PodUnavailable > 30%", application: true, percent: 30},
		{name: "seed 002's cluster rule", rule: "API-Server-Timeout > 3min", duration: 3 * time.Minute},
		{name: "spaces are optional and >= is inclusive", rule: "PodUnavailable>=12.5%", application: true, percent: 12.5, inclusive: true},
		{name: "seconds", rule: "API-Server-Timeout > 90s", duration: 90 * time.Second},
		{name: "a compound duration with mins", rule: "API-Server-Timeout > 1mins30s", duration: 90 * time.Second},
		{name: "a compound duration with min", rule: "API-Server-Timeout > 1min30s", duration: 90 * time.Second},
		{name: "a Go duration", rule: "API-Server-Timeout > 1m30s", duration: 90 * time.Second},
		{name: "a cluster metric in the application list", rule: "API-Server-Timeout > 3min", application: true, bad: "belongs in clusterFailureDetection"},
		{name: "an application metric in the cluster list", rule: "PodUnavailable > 30%", bad: "belongs in applicationFailureDetection"},
		{name: "an unknown metric", rule: "Latency > 3s", bad: `unsupported metric "Latency"`},
		{name: "a less-than operator", rule: "PodUnavailable < 30%", application: true, bad: "unsupported operator"},
		{name: "a percentage over 100", rule: "PodUnavailable > 130%", application: true, bad: "at most 100%"},
		{name: "a duration for a percentage", rule: "PodUnavailable > 3min", application: true, bad: "takes a percentage"},
		{name: "a zero duration", rule: "API-Server-Timeout > 0s", bad: "greater than 0"},
		{name: "no threshold", rule: "PodUnavailable >", application: true, bad: "must be"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, reason := ParseDetectionRule(tt.rule, tt.application)
			if tt.bad != "" {
				if reason == "" || !strings.Contains(reason, tt.bad) {
					t.Fatalf("reason %q, want one containing %q", reason, tt.bad)
				}
				return
			}
			if reason != "" {
				t.Fatalf("unexpected reason %q", reason)
			}
			if r.Percent != tt.percent || r.Duration != tt.duration || r.Inclusive != tt.inclusive {
				t.Fatalf("parsed %+v", r)
			}
		})
	}
}

func TestDetectionRuleHolds(t *testing.T) {
	gt, _ := ParseDetectionRule("PodUnavailable > 30%", true)
	ge, _ := ParseDetectionRule("PodUnavailable >= 30%", true)
	if gt.Holds(30, 0) || !gt.Holds(30.1, 0) || !ge.Holds(30, 0) {
		t.Fatal("> is strict, >= is not")
	}
	to, _ := ParseDetectionRule("API-Server-Timeout > 3min", false)
	if to.Holds(0, 3*time.Minute) || !to.Holds(0, 3*time.Minute+time.Second) {
		t.Fatal("API-Server-Timeout > 3min holds only after 3 minutes")
	}
}
