package executord

import (
	"testing"

	"github.com/flotilla-io/flotilla/events/eventstest"
)

func TestDocTableIsWhatTheDaemonBindsAndPublishes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Instance = "<instance>"
	pull := cfg
	pull.Cluster = "member1"
	consumers := append(Consumers(cfg, "member1"), Consumers(pull, "member1")...)
	eventstest.CheckDocTable(t, "doc.go", "executord", consumers, Produces, map[string]string{"member1": "<cluster>"})
}
