package member

import (
	"context"

	"github.com/flotilla-io/flotilla/events"
)

// Worker serves one member cluster in a goroutine of its own, which a
// Supervisor starts and stops. A worker type embeds Task, where the
// Supervisor keeps what it needs to stop it.
type Worker interface {
	// Run serves the cluster until ctx is done. It returns only once every
	// goroutine it started has ended.
	Run(ctx context.Context)
	task() *Task
}

// Task is the Supervisor's record of one running worker: embed it (by
// value) in the worker type. Its zero value is a worker not started.
type Task struct {
	gen    int64 // the generation of the latest registration taken for the cluster
	cancel context.CancelFunc
	done   chan struct{}
}

func (t *Task) task() *Task { return t }

// Supervisor starts, replaces and stops the one worker per member cluster
// that healthd and executord each run: a worker is started when its
// cluster is registered, replaced when the cluster is registered again
// with a newer generation, and stopped when the cluster is deregistered.
// It keeps the tombstones of deleted clusters (events.Tombstones), so a
// registration redelivered from before a deletion starts nothing.
//
// The workers themselves are a map by cluster name that the daemon owns,
// since it reads them too (snapshots, readiness); every method takes it.
// The zero value is ready to use. A Supervisor is not safe for concurrent
// use: the daemon calls it under the lock that guards the map.
type Supervisor[W Worker] struct {
	gone events.Tombstones
}

// Registered reports whether a registration of name at generation gen
// calls for a new worker: it does not if the registration is older than
// the cluster's deletion, or if a worker runs for a registration of the
// same or a newer generation. Otherwise gen is the generation a running
// worker now stands for (events.Outdated compares a later deregistration
// with it), even if the daemon goes on to keep that worker.
func (s *Supervisor[W]) Registered(workers map[string]W, name string, gen int64) bool {
	if s.gone.Stale(name, gen) {
		return false
	}
	if w, ok := workers[name]; ok {
		t := w.task()
		if t.gen >= gen {
			return false
		}
		t.gen = gen
	}
	return true
}

// Deregistered follows a deregistration of name at generation gen. If a
// worker runs for a newer registration the deregistration is outdated
// (events.Outdated) and changes nothing: counts is false. Otherwise the
// cluster is buried at gen and its worker, if one runs, is stopped (Stop)
// and returned.
func (s *Supervisor[W]) Deregistered(workers map[string]W, name string, gen int64) (stopped W, counts bool) {
	if w, ok := workers[name]; ok && events.Outdated(gen, w.task().gen) {
		return stopped, false
	}
	stopped, _ = s.Stop(workers, name)
	s.gone.Bury(name, gen)
	return stopped, true
}

// Start runs w as name's worker, for the registration of generation gen,
// until it is stopped (Stop, StopAll); a worker already running for name
// is stopped first. ctx is the context of the event that started it: the
// worker keeps its values but not its deadline or cancellation, because
// the bus cancels a handler's context when the handler returns (or at its
// deadline) and the worker must outlive the event. The daemon's shutdown
// ends it through StopAll.
func (s *Supervisor[W]) Start(ctx context.Context, workers map[string]W, name string, gen int64, w W) {
	s.Stop(workers, name)
	t := w.task()
	ctx, t.cancel = context.WithCancel(context.WithoutCancel(ctx))
	t.gen, t.done = gen, make(chan struct{})
	workers[name] = w
	go func() {
		defer close(t.done)
		w.Run(ctx)
	}()
}

// Stop stops name's worker, waits until its Run has returned, and takes it
// out of workers. It returns the worker (its state is the daemon's to hand
// over to the next one) and whether there was one.
func (s *Supervisor[W]) Stop(workers map[string]W, name string) (W, bool) {
	w, ok := workers[name]
	if !ok {
		return w, false
	}
	wait(w.task())
	delete(workers, name)
	return w, true
}

// StopAll stops every worker and waits until all have returned, for the
// daemon's shutdown. The workers stay in the map, stopped.
func (s *Supervisor[W]) StopAll(workers map[string]W) {
	for _, w := range workers {
		if t := w.task(); t.cancel != nil {
			t.cancel()
		}
	}
	for _, w := range workers {
		wait(w.task())
	}
}

// wait cancels t's worker and waits until it has returned; a worker never
// started has nothing to wait for.
func wait(t *Task) {
	if t.cancel == nil {
		return
	}
	t.cancel()
	<-t.done
}
