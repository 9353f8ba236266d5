package natsbus

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"
)

func TestTransientErrorsAreThoseATryAgainMayAnswer(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"no stream leader yet", &jetstream.APIError{Code: 503, ErrorCode: 10008}, true},
		{"the same event being stored by another publisher on a cluster", &jetstream.APIError{Code: 409, ErrorCode: 10158}, true},
		{"a wrapped timeout", fmt.Errorf("publish: %w", context.DeadlineExceeded), true},
		{"a full stream", &jetstream.APIError{Code: 503, ErrorCode: 10077}, false},
		{"a wrong last sequence", &jetstream.APIError{Code: 400, ErrorCode: 10071}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, transient(c.err)); diff != "" {
				t.Errorf("transient(%v) (-want +got):\n%s", c.err, diff)
			}
		})
	}
}
