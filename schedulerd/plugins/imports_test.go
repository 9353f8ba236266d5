package plugins

import (
	"os/exec"
	"strings"
	"testing"
)

// Plugins return statuses; the runner logs and measures. They must not
// pull in logging, metrics or the bus.
func TestPluginsImportNoLoggingMetricsOrBus(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...", "../framework", "../core").CombinedOutput()
	if err != nil {
		t.Skipf("go list unavailable: %v: %s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"go.uber.org/zap", "github.com/prometheus/", "github.com/nats-io/"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("scheduler plugins depend on %s", dep)
			}
		}
	}
}
