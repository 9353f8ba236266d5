package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// hub fans the process's one Follow out to the open tabs: each /live
// stream is a channel here, not a consumer on the bus.
type hub struct {
	mu      sync.Mutex
	clients map[*client]bool
}

// client is one /live stream; tail: it wants every event (the events
// page), with its filters.
type client struct {
	send          chan sse
	tail          bool
	subject, kind string
}

// sse is one server-sent event.
type sse struct{ name, data string }

func newHub() *hub { return &hub{clients: map[*client]bool{}} }

func (h *hub) add(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clients[c] = true
}

func (h *hub) remove(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, c)
}

// Clients is how many /live streams are open.
func (s *Server) Clients() int {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return len(s.hub.clients)
}

// broadcast sends m to the clients keep selects; a client too slow to take
// it misses it (a page then still refreshes on the next change).
func (h *hub) broadcast(m sse, keep func(*client) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		if !keep(c) {
			continue
		}
		select {
		case c.send <- m:
		default:
		}
	}
}

// event sends a bus event to the tails whose filters it passes.
func (h *hub) event(e Event) {
	row := newEventRow(e)
	data, err := json.Marshal(row)
	if err != nil {
		return
	}
	h.broadcast(sse{name: "bus", data: string(data)}, func(c *client) bool { return c.tail && eventMatches(e, c.subject, c.kind) })
}

// changed tells every page that the fleet was read again.
func (h *hub) changed() {
	h.broadcast(sse{name: "changed", data: time.Now().UTC().Format(time.RFC3339Nano)}, func(c *client) bool { return !c.tail })
}

// heartbeat keeps idle streams open through proxies.
const heartbeat = 15 * time.Second

// live is the server-sent-events stream a page opens once it has loaded:
// "changed" when the fleet changed (the page fetches itself again), and
// for the events page (?tail=1&subject=&type=) "bus" with every event.
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	q := r.URL.Query()
	c := &client{send: make(chan sse, 256), tail: q.Get("tail") != "", subject: q.Get("subject"), kind: q.Get("type")}
	s.hub.add(c)
	defer s.hub.remove(c)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n: following\n\n")
	flusher.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			fmt.Fprint(w, ": heartbeat\n\n")
		case m := <-c.send:
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", m.name, m.data)
		}
		flusher.Flush()
	}
}
