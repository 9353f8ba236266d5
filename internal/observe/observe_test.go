package observe_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/internal/observe"
)

func TestReadyListsTheFailingChecksInNameOrder(t *testing.T) {
	h := observe.NewHealth()
	h.Add("nats", func() error { return nil })
	h.Add("consumer schedulerd-work", func() error { return errors.New("consumer schedulerd-work stuck") })
	h.Add("consumer policyd-input", func() error { return errors.New("consumer not running") })
	h.Add("consumer schedulerd-health", func() error { return nil })
	want := "consumer policyd-input: consumer not running\nconsumer schedulerd-work: consumer schedulerd-work stuck"
	for range 10 { // map order varies from run to run
		if diff := cmp.Diff(want, h.Ready().Error()); diff != "" {
			t.Fatalf("Ready() (-want +got):\n%s", diff)
		}
	}
}

func TestReadyIsNilWhenEveryCheckPasses(t *testing.T) {
	h := observe.NewHealth()
	h.Add("nats", func() error { return nil })
	if err := h.Ready(); err != nil {
		t.Fatalf("Ready() = %v, want nil", err)
	}
}
