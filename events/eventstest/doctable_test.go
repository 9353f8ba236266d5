package eventstest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDocTable(t *testing.T) {
	doc := `// Package x does things.
//
//	Consumes  io.flotilla.binding.changed|removed.v1,
//	          io.flotilla.cluster.health.changed.v1 (transitions only)  (FLOTILLA_POLICY, consumer x-policy)
//	Produces  io.flotilla.placement.decided.v1 (FLOTILLA_PLACEMENT)
//	State     io.flotilla.work.deleted.v1 (FLOTILLA_WORK) is not a row
package x
`
	consumes, produces := parseDocTable(doc)
	tests := []struct {
		name      string
		want, got []string
	}{
		{"alternatives are spelled out and a group takes its stream and consumer", []string{
			"io.flotilla.binding.changed.v1 on FLOTILLA_POLICY by consumer x-policy",
			"io.flotilla.binding.removed.v1 on FLOTILLA_POLICY by consumer x-policy",
			"io.flotilla.cluster.health.changed.v1 on FLOTILLA_POLICY by consumer x-policy",
		}, consumes},
		{"a produced type takes its stream, and the State section is not read", []string{
			"io.flotilla.placement.decided.v1 on FLOTILLA_PLACEMENT",
		}, produces},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubjectMatches(t *testing.T) {
	tests := []struct {
		name            string
		filter, pattern string
		want            bool
	}{
		{"a > filter matches every key under its prefix", "flotilla.binding.>", "flotilla.binding.<key>", true},
		{"a > filter does not match another prefix", "flotilla.health.>", "flotilla.health-snapshot", false},
		{"an exact filter matches its subject", "flotilla.health-snapshot", "flotilla.health-snapshot", true},
		{"a * filter matches one token only", "flotilla.member.*", "flotilla.work.<cluster>.<key>", false},
		{"a * filter matches a cluster", "flotilla.member.*", "flotilla.member.<cluster>", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := subjectMatches(tt.filter, tt.pattern); got != tt.want {
				t.Errorf("subjectMatches(%q, %q) = %v, want %v", tt.filter, tt.pattern, got, tt.want)
			}
		})
	}
}
