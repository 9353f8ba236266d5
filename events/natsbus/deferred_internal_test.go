package natsbus

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestARetryNeverPutsAnOlderEventOverANewerOneOnItsSubject(t *testing.T) {
	srv, err := StartEmbedded("127.0.0.1:0", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := Connect(ctx, srv.URL(), Options{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	failed := func(seq uint64, data string) *deferred {
		m := nats.NewMsg("t.x")
		m.Data = []byte(data)
		return &deferred{msg: m, typ: "test", seq: seq}
	}
	// Event 3 failed, but event 5 on the same subject was published after it: 3 is skipped.
	b.latest["t.x"] = 5
	if !b.redo(ctx, failed(3, "old"), errors.New("ack timeout")) {
		t.Fatal("redo of a superseded event did not return")
	}
	// Event 5 failed too and is the newest: it is published again.
	if !b.redo(ctx, failed(5, "new"), errors.New("ack timeout")) {
		t.Fatal("redo of the newest event failed")
	}
	st, err := b.js.Stream(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "t.x")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(ctx)
	if string(m.Data) != "new" || info.State.Msgs != 1 {
		t.Fatalf("stream holds %d messages, last %q; want only the newest", info.State.Msgs, m.Data)
	}
	if _, ok := b.latest["t.x"]; ok {
		t.Fatal("the subject is still marked as having an event in flight")
	}
}
