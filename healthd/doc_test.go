package healthd

import (
	"testing"

	"github.com/flotilla-io/flotilla/events/eventstest"
)

func TestDocTableIsWhatTheDaemonBindsAndPublishes(t *testing.T) {
	eventstest.CheckDocTable(t, "doc.go", "healthd", Consumers(DefaultConfig()), Produces, nil)
}
