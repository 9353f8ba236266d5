package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events/eventstest"
)

// replay refuses what it cannot honour, exiting non-zero with the reason
// and printing nothing (it used to print an empty or unfiltered table).
func TestReplayRefusesAnUnknownFormatStreamOrSubjectAndANegativeSince(t *testing.T) {
	url, _ := eventstest.Server(t)
	for _, c := range []struct {
		name, args string
		// wantErr is the error; "" for none.
		wantErr string
	}{
		{"a table by default", "replay --since 1h", ""},
		{"json is a format it prints", "replay --since 1h -o json", ""},
		{"a stream is found whatever its case", "replay --stream flotilla_input --from-seq 1", ""},
		{"yaml is no format it prints", "replay --since 1h -o yaml",
			"-o yaml: unknown output format: replay prints a table, or with -o json one JSON object per event"},
		{"an unknown format is refused", "replay --since 1h -o bogus",
			"-o bogus: unknown output format: replay prints a table, or with -o json one JSON object per event"},
		{"a stream there is not is refused with the streams there are", "replay --stream FOO",
			"no stream FOO (streams: FLOTILLA_INPUT, FLOTILLA_POLICY, FLOTILLA_HEALTH, FLOTILLA_PLACEMENT, FLOTILLA_WORK, FLOTILLA_DEADLETTER)"},
		{"a subject with > before its end is refused", "replay --since 1h --subject flotilla.>.placement",
			`--subject "flotilla.>.placement": not a NATS subject: dot-separated tokens, none empty or with spaces, and > only as the last token`},
		{"a subject with an empty token is refused", "replay --since 1h --subject flotilla..placement",
			`--subject "flotilla..placement": not a NATS subject: dot-separated tokens, none empty or with spaces, and > only as the last token`},
		{"a negative --since is refused", "replay --since -1h",
			"--since -1h0m0s: must not be negative (it counts back from now)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, err := runCLI(t, url, strings.Fields(c.args)...)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(c.wantErr, got); diff != "" {
				t.Fatalf("flotilla %s: error (-want +got):\n%s\n%s%s", c.args, diff, out, errOut)
			}
			if err != nil && out != "" {
				t.Errorf("flotilla %s printed on refusing:\n%s", c.args, out)
			}
		})
	}
	t.Run("a subject with a space is refused", func(t *testing.T) {
		_, _, err := runCLI(t, url, "replay", "--since", "1h", "--subject", "flotilla.placement. x")
		if err == nil || !strings.Contains(err.Error(), "not a NATS subject") {
			t.Errorf("error %v, want one saying it is not a NATS subject", err)
		}
	})
}
