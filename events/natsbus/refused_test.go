package natsbus_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

// Refused tells JetStream's refusal of a publish, which another attempt
// would meet too, from an answer that never came.
func TestRefusedTellsARefusalFromALostAnswer(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"a full stream's refusal, wrapped by Publish, is a refusal",
			fmt.Errorf("publish x on y: %w", fmt.Errorf("nats: %w", &jetstream.APIError{Code: 503, Description: "maximum bytes exceeded"})), true},
		{"an acknowledgement that never came is not", fmt.Errorf("publish x on y: %w", context.DeadlineExceeded), false},
		{"no JetStream answering yet is not", fmt.Errorf("publish x on y: %w", jetstream.ErrNoStreamResponse), false},
		{"a lost connection is not", fmt.Errorf("publish x on y: %w", nats.ErrConnectionClosed), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, natsbus.Refused(c.err)); diff != "" {
				t.Errorf("Refused(%v) (-want +got): %s", c.err, diff)
			}
		})
	}
}
