package executord

import (
	"testing"

	"github.com/flotilla-io/flotilla/events/eventstest"
)

func TestDocTableIsWhatTheDaemonBindsAndPublishes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Instance = "<instance>"
	eventstest.CheckDocTable(t, "doc.go", "executord", Consumers(cfg, "member1"), Produces, map[string]string{"member1": "<cluster>"})
}
