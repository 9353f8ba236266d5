package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"
)

func TestBenchPlacesEveryTemplateWithEachStrategy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded JetStream and both daemons")
	}
	for _, strategy := range []string{"static", "dynamic", "duplicated"} {
		t.Run(strategy, func(t *testing.T) {
			o := &benchOptions{clusters: 5, templates: 40, strategy: strategy, output: "json", daemons: "inprocess", instances: 1, timeout: time.Minute, logLevel: "warn"}
			var progress bytes.Buffer
			res, err := runBench(context.Background(), &progress, o)
			if err != nil {
				t.Fatalf("%v\n%s", err, progress.String())
			}
			if res.Placements != 40 || res.Scheduled != 40 || res.DeadLetters != 0 || res.PerSecond <= 0 || res.LatencyMs.P99 <= 0 {
				t.Fatalf("result %+v", res)
			}
			var out bytes.Buffer
			if err := printBench(&out, "json", res); err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["placementsPerSecond"] == nil {
				t.Fatalf("-o json: %v\n%s", err, out.String())
			}
		})
	}
}

func TestBenchRefusesANonEmptyDataDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/x", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := &benchOptions{clusters: 1, templates: 1, strategy: "static", output: "text", daemons: "inprocess", instances: 1, dataDir: dir, timeout: time.Minute}
	if _, err := runBench(context.Background(), &bytes.Buffer{}, o); err == nil {
		t.Fatal("a non-empty --data-dir was accepted")
	}
}
