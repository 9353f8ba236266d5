package natsbus_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// TestAFullStreamKeepsEveryCurrentRow fills a small stream far past its
// byte cap with busy subjects after a quiet subject wrote its only row, and
// reads the rows back: a table (every stream daemons rebuild from) must
// still hold the quiet row and each subject's newest stored message; a log
// keeps taking messages and loses its oldest.
func TestAFullStreamKeepsEveryCurrentRow(t *testing.T) {
	tests := []struct {
		name string
		log  bool
		// before creates the stream as a release before this one did
		// (discard-old), so EnsureStreams must change it in place.
		before bool
		// wantQuiet says whether the quiet subject's row survives.
		wantQuiet bool
		// wantRefused says whether a full stream refuses publishes.
		wantRefused bool
	}{
		{name: "a full table refuses new messages and keeps the quiet subject's only row", wantQuiet: true, wantRefused: true},
		{name: "a table made before with discard-old is updated in place and keeps the quiet subject's only row", before: true, wantQuiet: true, wantRefused: true},
		{name: "a full log keeps taking messages and drops its oldest, the quiet row among them", log: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			spec := events.StreamSpec{Name: "ROWS", Subjects: []string{"rows.>"}, MaxPerSubject: 5, MaxBytes: 32 << 10, Log: tt.log}
			srv, err := natsbus.StartEmbedded("127.0.0.1:0", t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Shutdown)
			bus, err := natsbus.Connect(ctx, srv.URL(), natsbus.Options{Name: t.Name(), Streams: []events.StreamSpec{spec}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(bus.Close)

			stored := map[string]string{} // subject -> id of its newest stored event
			refused := 0
			publish := func(subj string, size int) {
				t.Helper()
				e, err := events.New(events.TypeBindingChanged, "/test", subj, map[string]string{"pad": strings.Repeat("x", size)})
				if err != nil {
					t.Fatal(err)
				}
				if err := bus.Publish(ctx, subj, e); err != nil {
					if !strings.Contains(err.Error(), "maximum bytes exceeded") {
						t.Fatalf("publish on %s: %v", subj, err)
					}
					refused++
					return
				}
				stored[subj] = e.ID()
			}

			if tt.before {
				if _, err := bus.JetStream().CreateStream(ctx, jetstream.StreamConfig{
					Name: spec.Name, Subjects: spec.Subjects, Storage: jetstream.FileStorage,
					MaxMsgsPerSubject: spec.MaxPerSubject, MaxBytes: spec.MaxBytes, Discard: jetstream.DiscardOld,
				}); err != nil {
					t.Fatal(err)
				}
				publish("rows.quiet", 100)
			}
			if err := bus.EnsureStreams(ctx); err != nil {
				t.Fatal(err)
			}
			if !tt.before {
				publish("rows.quiet", 100)
			}
			// 20 busy subjects x 10 messages of ~600 bytes: about four
			// times the cap, and twice MaxPerSubject on every subject.
			for i := 0; i < 10; i++ {
				for s := 0; s < 20; s++ {
					publish(fmt.Sprintf("rows.busy.%d", s), 400)
				}
			}

			if got := refused > 0; got != tt.wantRefused {
				t.Errorf("publishes refused = %d, want some refused: %v", refused, tt.wantRefused)
			}
			ms, err := bus.LatestPerSubject(ctx, spec.Name, "rows.>")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, m := range ms {
				got[m.Subject] = m.Event.ID()
			}
			want := stored
			if !tt.wantQuiet {
				delete(want, "rows.quiet")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}
