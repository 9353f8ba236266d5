// Package observe gives every daemon the same logging and HTTP endpoints:
// zap (JSON when not on a terminal, console otherwise), Prometheus /metrics,
// and /healthz and /readyz backed by real checks.
package observe

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"
)

// NewLogger builds the process logger. format is "json", "console" or ""
// (auto: console on a terminal, JSON otherwise, e.g. in a container).
func NewLogger(level, format string) (*zap.Logger, error) {
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	if format == "" {
		format = "json"
		if term.IsTerminal(int(os.Stderr.Fd())) {
			format = "console"
		}
	}
	var cfg zap.Config
	switch format {
	case "json":
		cfg = zap.NewProductionConfig()
	case "console":
		cfg = zap.NewDevelopmentConfig()
		cfg.DisableStacktrace = true
		cfg.EncoderConfig.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
	default:
		return nil, fmt.Errorf("--log-format %q: want json or console", format)
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.OutputPaths = []string{"stderr"}
	return cfg.Build()
}

// NewRegistry returns a Prometheus registry with the Go and process collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Health collects named readiness checks.
type Health struct {
	mu     sync.Mutex
	checks map[string]func() error
}

// NewHealth returns an empty check set.
func NewHealth() *Health { return &Health{checks: map[string]func() error{}} }

// Add registers a readiness check (e.g. "nats", "consumer policyd-input").
func (h *Health) Add(name string, check func() error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.checks[name] = check
}

// Ready runs every check; the error lists the failing ones, one a line,
// in the order of their names.
func (h *Health) Ready() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(h.checks)) {
		if err := h.checks[name](); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Serve runs the HTTP endpoints on addr until ctx is done. An empty addr
// disables them.
func Serve(ctx context.Context, addr string, reg *prometheus.Registry, h *Health, log *zap.Logger) error {
	if addr == "" {
		return nil
	}
	ln, err := Listen(addr)
	if err != nil {
		return err
	}
	return ServeOn(ctx, ln, reg, h, log)
}

// Listen opens addr for ServeOn, naming the flag in its error.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	return ln, nil
}

// ServeOn runs the HTTP endpoints on ln until ctx is done.
func ServeOn(ctx context.Context, ln net.Listener, reg *prometheus.Registry, h *Health, log *zap.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := h.Ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	log.Info("serving /metrics /healthz /readyz", zap.String("addr", ln.Addr().String()))
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
