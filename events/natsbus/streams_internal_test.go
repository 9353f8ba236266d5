package natsbus

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/flotilla-io/flotilla/events"
)

// storageLimit caps the embedded server's JetStream file storage, as a
// small free disk does.
func storageLimit(bytes int64) EmbeddedOption {
	return func(o *server.Options) error { o.JetStreamMaxStore = bytes; return nil }
}

// streamCaps is what the catalogue's streams reserve.
func streamCaps() int64 {
	var caps int64
	for _, s := range events.Streams {
		caps += s.MaxBytes
	}
	return caps
}

// limitedServer starts a server whose storage holds bytes, and connects.
func limitedServer(t *testing.T, bytes int64) (*Embedded, *Bus) {
	t.Helper()
	return testServer(t, storageLimit(bytes))
}

// testServer starts an embedded server with opts, and connects.
func testServer(t *testing.T, opts ...EmbeddedOption) (*Embedded, *Bus) {
	t.Helper()
	srv, err := StartEmbedded("127.0.0.1:0", t.TempDir(), nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	bus, err := Connect(context.Background(), srv.URL(), Options{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	return srv, bus
}

// A server whose storage holds every stream's cap once, not twice, is
// what a daemon restarting on a disk with less than twice the caps free
// meets: the streams are there, and ensuring them again must change
// nothing and ask for no storage. It used to ask to create them again,
// which the server refused as "insufficient storage resources", taken
// for a cluster still forming and tried again for a minute.
func TestStreamsEnsuredAgainOnAServerThatHoldsTheirCapsOnlyOnceAreLeftAlone(t *testing.T) {
	caps := streamCaps()
	_, bus := limitedServer(t, caps+caps/10)
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := bus.EnsureStreams(ctx)
		cancel()
		if err != nil {
			t.Fatalf("ensure the streams, time %d: %v", i+1, err)
		}
	}
	for _, s := range events.Streams {
		st, err := bus.js.Stream(context.Background(), s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if want := bus.streamConfig(s); !sameStreamConfig(st.CachedInfo().Config, want) {
			t.Errorf("%s: the server's config is not what EnsureStreams asks for, so every start updates it:\nhave %+v\nwant %+v", s.Name, st.CachedInfo().Config, want)
		}
	}
	// A stream that does not fit at all is refused at once, saying why.
	_, full := limitedServer(t, caps/2)
	start := time.Now()
	err := full.EnsureStreams(context.Background())
	if err == nil || !strings.Contains(err.Error(), "free disk space") {
		t.Fatalf("streams beyond the server's storage: want a refusal saying to free disk space, got %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the refusal took %s: a full disk was waited on as a cluster forming", took)
	}
}

// Daemons starting together on a fresh server all ensure the streams at
// once: the ones that lose the race to create a stream find it made by
// another, even where the server refuses their creation as insufficient
// storage rather than as a name in use (its storage holds each cap once).
func TestDaemonsEnsuringTheStreamsTogetherAllSucceed(t *testing.T) {
	caps := streamCaps()
	srv, _ := limitedServer(t, caps+caps/10)
	const daemons = 4
	errs := make(chan error, daemons)
	for i := range daemons {
		bus, err := Connect(context.Background(), srv.URL(), Options{Name: fmt.Sprintf("%s-%d", t.Name(), i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(bus.Close)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			errs <- bus.EnsureStreams(ctx)
		}()
	}
	for range daemons {
		if err := <-errs; err != nil {
			t.Errorf("a daemon ensuring the streams: %v", err)
		}
	}
}

// Whatever the free disk, a Flotilla server's storage limit holds every
// stream's cap with a quarter to spare, so that its start is not refused
// on a small disk; on a large one it is nats-server's own default.
func TestAServersStorageLimitHoldsEveryStreamsCap(t *testing.T) {
	caps := streamCaps()
	dir := t.TempDir()
	got := jetStreamStore(dir)
	if got < caps+caps/4 {
		t.Errorf("storage limit %d B, below the caps %d B and a quarter", got, caps)
	}
	if free, ok := freeStore(dir); ok && free > caps+caps/4 && got != free {
		t.Errorf("storage limit %d B on a disk with %d B to give: want nats-server's default", got, free)
	}
}
