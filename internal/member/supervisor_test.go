package member

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fake is a worker that runs until it is stopped and notes when it ends.
type fake struct {
	Task
	label string
	j     *journal
}

func (f *fake) Run(ctx context.Context) {
	f.j.running.Add(1)
	defer f.j.running.Done()
	<-ctx.Done()
	f.j.note("stopped " + f.label)
}

// journal is what the fakes of one test did.
type journal struct {
	running sync.WaitGroup
	mu      sync.Mutex
	lines   []string
}

func (j *journal) note(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, s)
}

func (j *journal) read() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.lines...)
}

// step is one registration (dereg false) or deregistration of a cluster.
type step struct {
	dereg bool
	name  string
	gen   int64
}

func reg(name string, gen int64) step   { return step{name: name, gen: gen} }
func dereg(name string, gen int64) step { return step{dereg: true, name: name, gen: gen} }

// follow handles steps the way a daemon's registration handler does.
func follow(ctx context.Context, s *Supervisor[*fake], workers map[string]*fake, j *journal, steps []step) {
	for _, st := range steps {
		if st.dereg {
			if _, counts := s.Deregistered(workers, st.name, st.gen); !counts {
				j.note(fmt.Sprintf("outdated %s@%d", st.name, st.gen))
			}
			continue
		}
		if !s.Registered(workers, st.name, st.gen) {
			j.note(fmt.Sprintf("ignored %s@%d", st.name, st.gen))
			continue
		}
		if old, ok := s.Stop(workers, st.name); ok {
			j.note("handed over from " + old.label)
		}
		s.Start(ctx, workers, st.name, st.gen, &fake{label: fmt.Sprintf("%s@%d", st.name, st.gen), j: j})
	}
}

func running(workers map[string]*fake) []string {
	out := []string{}
	for _, w := range workers {
		out = append(out, w.label)
	}
	sort.Strings(out)
	return out
}

func TestTheSupervisorRunsOneWorkerPerRegisteredCluster(t *testing.T) {
	cases := []struct {
		name        string
		steps       []step
		wantRunning []string
		wantJournal []string
	}{
		{"each registered cluster gets a worker", []step{reg("c1", 1), reg("c2", 1)},
			[]string{"c1@1", "c2@1"}, nil},
		{"a newer registration replaces the worker, stopped before its successor starts", []step{reg("c1", 1), reg("c1", 2)},
			[]string{"c1@2"}, []string{"stopped c1@1", "handed over from c1@1"}},
		{"a registration not newer than the running one is ignored", []step{reg("c1", 2), reg("c1", 2), reg("c1", 1)},
			[]string{"c1@2"}, []string{"ignored c1@2", "ignored c1@1"}},
		{"a deregistration stops the worker", []step{reg("c1", 1), reg("c2", 1), dereg("c1", 2)},
			[]string{"c2@1"}, []string{"stopped c1@1"}},
		{"a registration older than the deletion, delivered after it, starts nothing", []step{reg("c1", 1), dereg("c1", 2), reg("c1", 1), reg("c1", 2)},
			[]string{}, []string{"stopped c1@1", "ignored c1@1", "ignored c1@2"}},
		{"a cluster registered again after its deletion gets a worker", []step{reg("c1", 1), dereg("c1", 2), reg("c1", 3)},
			[]string{"c1@3"}, []string{"stopped c1@1"}},
		{"a deregistration older than the running registration changes nothing", []step{reg("c1", 1), dereg("c1", 2), reg("c1", 3), dereg("c1", 2)},
			[]string{"c1@3"}, []string{"stopped c1@1", "outdated c1@2"}},
		{"a deregistration of a cluster without a worker still buries it", []step{dereg("c1", 4), reg("c1", 3)},
			[]string{}, []string{"ignored c1@3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s Supervisor[*fake]
			workers := map[string]*fake{}
			j := &journal{}
			follow(context.Background(), &s, workers, j, c.steps)
			if diff := cmp.Diff(c.wantRunning, running(workers)); diff != "" {
				t.Errorf("running workers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.wantJournal, j.read()); diff != "" {
				t.Errorf("journal (-want +got):\n%s", diff)
			}
			s.StopAll(workers)
		})
	}
}

func TestStopAllReturnsOnceEveryWorkerHasEnded(t *testing.T) {
	var s Supervisor[*fake]
	workers := map[string]*fake{"never-started": {label: "never-started"}}
	j := &journal{}
	follow(context.Background(), &s, workers, j, []step{reg("c1", 1), reg("c2", 1), reg("c3", 1)})
	s.StopAll(workers)
	stopped := j.read()
	sort.Strings(stopped)
	if diff := cmp.Diff([]string{"stopped c1@1", "stopped c2@1", "stopped c3@1"}, stopped); diff != "" {
		t.Errorf("workers ended by StopAll (-want +got):\n%s", diff)
	}
	j.running.Wait() // would hang, and the test time out, if a Run were still going
}

// The bus cancels a handler's context as soon as the handler returns; a
// worker started from a registration event must keep serving its cluster.
func TestAWorkerOutlivesTheEventThatStartedIt(t *testing.T) {
	var s Supervisor[*fake]
	workers := map[string]*fake{}
	j := &journal{}
	ctx, cancel := context.WithCancel(context.Background())
	follow(ctx, &s, workers, j, []step{reg("c1", 1)})
	w := workers["c1"]
	cancel()
	select {
	case <-w.done:
		t.Fatal("the worker ended with the event's context")
	case <-time.After(100 * time.Millisecond):
	}
	s.StopAll(workers)
	if diff := cmp.Diff([]string{"stopped c1@1"}, j.read()); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}
}
