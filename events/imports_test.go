package events_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportRules keeps the architecture honest: events imports no NATS,
// no client-go and no daemon; daemons never import each other; policyd's
// pure rules (policyd/binding) import no bus, logger, metrics or client.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "github.com/flotilla-io/flotilla/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/flotilla-io/flotilla/"
	daemons := []string{"policyd", "schedulerd", "executord", "healthd"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		rel := strings.TrimPrefix(pkg, mod)
		for _, d := range deps {
			drel := strings.TrimPrefix(d, mod)
			if (rel == "events" || rel == "events/policy") && (strings.HasPrefix(d, "github.com/nats-io/") || strings.HasPrefix(d, "k8s.io/client-go")) {
				t.Errorf("%s imports %s: the contract must not depend on a transport or a cluster client", rel, d)
			}
			for _, a := range daemons {
				for _, b := range daemons {
					if a != b && (rel == a || strings.HasPrefix(rel, a+"/")) && (drel == b || strings.HasPrefix(drel, b+"/")) {
						t.Errorf("%s imports %s: daemons talk only through events", rel, drel)
					}
				}
			}
			if rel == "policyd/binding" && (strings.HasPrefix(d, "github.com/nats-io/") || strings.HasPrefix(d, "k8s.io/client-go") || strings.HasPrefix(d, "go.uber.org/zap") ||
				strings.HasPrefix(d, "github.com/prometheus/") || strings.HasPrefix(drel, "events/natsbus") || drel == "policyd") {
				t.Errorf("%s imports %s: policyd's binding rules are pure (simulate calls them without a bus or a logger)", rel, d)
			}
			if strings.HasPrefix(rel, "events") && (drel == "policyd" || drel == "schedulerd" || drel == "executord" || drel == "healthd") {
				t.Errorf("%s imports daemon %s", rel, drel)
			}
			// The library the daemons share stays below them; strict YAML
			// is pure (no transport either).
			if rel == "internal/member" || rel == "internal/strictyaml" {
				for _, a := range daemons {
					if drel == a || strings.HasPrefix(drel, a+"/") {
						t.Errorf("%s imports daemon package %s", rel, drel)
					}
				}
			}
			if rel == "internal/strictyaml" && strings.HasPrefix(d, "github.com/nats-io/") {
				t.Errorf("%s imports %s: strict YAML checking is pure", rel, d)
			}
		}
	}
}
