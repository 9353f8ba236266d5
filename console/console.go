// Package console serves Flotilla's read-only web console: every cluster,
// workload, decision and failover at a glance, live.
//
// It computes nothing of its own: every page is a view of readmodel.Fleet,
// the read model `flotilla get`, `describe`, `explain` and `replay` print,
// read through a Source (the CLI wires the bus). Pages are rendered on the
// server with html/template from embedded templates and assets, complete in
// the HTML sent; a script served from the binary then follows /live, one
// server-sent-events stream per tab fed by the one Follow of the process,
// and swaps the page's main element when the fleet changes.
package console

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/readmodel"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets
var assetFiles embed.FS

// Event is one stored event with where it is stored.
type Event struct {
	Stream, Subject string
	readmodel.Stored
}

// Source is what the console reads, at the edge: the CLI implements it on
// the bus. Every method takes the request's context.
type Source interface {
	// Fleet reads every view's input (readmodel.Fleet), as `get` does.
	Fleet(ctx context.Context) (readmodel.Fleet, error)
	// DeadLetters reads the dead letters, oldest first.
	DeadLetters(ctx context.Context) ([]readmodel.DeadLetter, error)
	// History reads every stored event about the template at key (its
	// accepted object and bindings, placements, failovers and work),
	// oldest first.
	History(ctx context.Context, key events.ObjectKey) ([]Event, error)
	// Recent reads the newest events of every stream, at most limit of
	// each, oldest first.
	Recent(ctx context.Context, limit int) ([]Event, error)
	// Follow calls fn for every event stored from its call on, in the
	// order of each stream, until ctx is done; it returns once it follows,
	// and fn runs on another goroutine. The console calls it once.
	Follow(ctx context.Context, fn func(Event)) error
}

// Server is the console: an http.Handler over one Source.
type Server struct {
	src   Source
	log   *zap.Logger
	pages map[string]*template.Template
	mux   *http.ServeMux
	// PageSize is how many templates /workloads shows per page.
	PageSize int

	mu      sync.Mutex
	snap    *snapshot // nil: read again
	reading chan struct{}
	// changes counts the changes Run has seen: a read that began before
	// the latest one is not kept as the snapshot (it would hide the change
	// from the refresh that change asks for).
	changes  uint64
	hub      *hub
	settleIn time.Duration
}

// snapshot is the fleet as last read, with the dead letters.
type snapshot struct {
	fleet  readmodel.Fleet
	dead   []readmodel.DeadLetter
	readAt time.Time
	// index: every placed template (readmodel.Fleet.TemplateIndex); keys:
	// every template, placed or only accepted, in key order; policies: the
	// name of the policy claiming each (policyName). Computed once a read:
	// every page of the matrix uses them.
	index    map[events.ObjectKey]readmodel.Template
	keys     []events.ObjectKey
	policies map[events.ObjectKey]string
}

// New returns the console over src; log may be nil.
func New(src Source, log *zap.Logger) (*Server, error) {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Server{src: src, log: log, pages: map[string]*template.Template{}, mux: http.NewServeMux(), PageSize: 50,
		hub: newHub(), settleIn: 150 * time.Millisecond}
	for _, name := range []string{"overview", "workloads", "workload", "cluster", "events", "error"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		s.pages[name] = t
	}
	assets, err := fs.Sub(assetFiles, "assets")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	s.mux.HandleFunc("GET /{$}", s.overview)
	s.mux.HandleFunc("GET /workloads", s.workloads)
	s.mux.HandleFunc("GET /workloads/{namespace}/{kind}/{name}", s.workload)
	s.mux.HandleFunc("GET /clusters/{name}", s.cluster)
	s.mux.HandleFunc("GET /events", s.events)
	s.mux.HandleFunc("GET /live", s.live)
	return s, nil
}

// ServeHTTP serves the console.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'")
	s.mux.ServeHTTP(w, r)
}

// Run follows the bus for the live pages until ctx is done: one Follow for
// the process however many tabs are open. Each event goes to the events
// tails at once; the fleet is read again once a burst has settled, and
// then every open page is told to refresh.
func (s *Server) Run(ctx context.Context) error {
	changed := make(chan struct{}, 1)
	err := s.src.Follow(ctx, func(e Event) {
		s.hub.event(e)
		if e.Subject == events.HealthSnapshotSubject {
			return // healthd's periodic resync: no change of its own
		}
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		timer := time.NewTimer(s.settleIn)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		s.mu.Lock()
		s.snap = nil
		s.changes++
		s.mu.Unlock()
		if _, err := s.read(ctx); err != nil {
			s.log.Warn("console: reading the fleet", zap.Error(err))
			continue
		}
		s.hub.changed()
	}
}

// read returns the current snapshot, reading it when there is none; one
// read at a time, which concurrent requests share. A read that a change
// overtook is returned to those waiting for it but not kept, so the next
// read (the refresh Run makes for that change) reads again.
func (s *Server) read(ctx context.Context) (*snapshot, error) {
	for {
		s.mu.Lock()
		if s.snap != nil {
			snap := s.snap
			s.mu.Unlock()
			return snap, nil
		}
		if wait := s.reading; wait != nil {
			s.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		since := s.changes
		s.reading = done
		s.mu.Unlock()
		snap, err := s.readNow(ctx)
		s.mu.Lock()
		s.reading = nil
		if err == nil && s.changes == since {
			s.snap = snap
		}
		s.mu.Unlock()
		close(done)
		// A read of a large fleet decodes every stored row at once; give
		// what it no longer holds back to the system rather than keep the
		// peak as the console's footprint (docs/performance.md).
		debug.FreeOSMemory()
		return snap, err
	}
}

func (s *Server) readNow(ctx context.Context) (*snapshot, error) {
	f, err := s.src.Fleet(ctx)
	if err != nil {
		return nil, err
	}
	dead, err := s.src.DeadLetters(ctx)
	if err != nil {
		// The pages stand without them; the overview says nothing of them.
		s.log.Warn("console: reading dead letters", zap.Error(err))
	}
	snap := &snapshot{fleet: f, dead: dead, readAt: time.Now(), index: f.TemplateIndex(), policies: map[events.ObjectKey]string{}}
	for k := range snap.index {
		snap.keys = append(snap.keys, k)
	}
	for k, rec := range f.Published.Records {
		if _, ok := snap.index[k]; !ok && rec.Role == events.RoleTemplate {
			snap.keys = append(snap.keys, k)
		}
	}
	sort.Slice(snap.keys, func(i, j int) bool { return snap.keys[i].String() < snap.keys[j].String() })
	for _, k := range snap.keys {
		ref, _ := f.Published.ClaimingPolicy(k)
		snap.policies[k] = policyName(ref)
	}
	return snap, nil
}

// render writes page name with data, or the error page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := s.pages[name].Execute(w, data); err != nil && !errors.Is(err, context.Canceled) {
		s.log.Warn("console: rendering", zap.String("page", name), zap.Error(err))
	}
}

// fail writes the error page with status code.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, err error) {
	w.WriteHeader(code)
	s.render(w, r, "error", page{Title: http.StatusText(code), Nav: "", Data: err.Error()})
}

// page is what the layout renders around a page's own data.
type page struct {
	Title string
	// Nav names the navigation entry of the page.
	Nav  string
	Data any
	// Live: the page follows /live (the events tail follows it itself).
	Live   bool
	ReadAt time.Time
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"stamp": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"rfc3339": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"lower":   strings.ToLower,
	"join":    strings.Join,
	// abbrev: a phase in a cell without replicas.
	"abbrev": func(phase string) string { return phase[:min(len(phase), 3)] },
	"phases": func() []string {
		return []string{events.WorkPending, events.WorkApplied, events.WorkProgressing, events.WorkRunning, events.WorkFailed,
			events.WorkDeleting, readmodel.WorkUnknown, readmodel.WorkEvicted}
	},
	"last": func(n int, ds []readmodel.DeadLetter) []readmodel.DeadLetter { return ds[max(0, len(ds)-n):] },
}
