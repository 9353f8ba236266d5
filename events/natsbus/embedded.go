package natsbus

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/flotilla-io/flotilla/events"
)

// Embedded is an in-process nats-server with JetStream file storage.
type Embedded struct {
	srv *server.Server
}

// StartEmbedded runs nats-server in this process, listening on listen
// ("127.0.0.1:4222"; port 0 picks a free one) with JetStream data in dataDir,
// with authentication by auth's operator (nil: none, anyone may connect),
// and options (WithTLS).
func StartEmbedded(listen, dataDir string, auth *Authority, options ...EmbeddedOption) (*Embedded, error) {
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: bad port", listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName: "flotilla",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   dataDir,
		NoSigs:     true,
		MaxPayload: events.MaxPayload,
		// JetStreamMaxStore: see jetStreamStore.
		JetStreamMaxStore: jetStreamStore(dataDir),
	}
	if err := secure(opts, auth); err != nil {
		return nil, err
	}
	for _, o := range options {
		if err := o(opts); err != nil {
			return nil, err
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("nats-server did not become ready on %s (port in use?)", listen)
	}
	return &Embedded{srv: srv}, nil
}

// URL is the client URL of the server: tls://host:port when it serves TLS.
func (e *Embedded) URL() string { return e.srv.ClientURL() }

// Shutdown stops the server and waits for it.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}
