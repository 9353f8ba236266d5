package events_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers of the module, lowest first (DESIGN.md decision 17). A package
// may import its own layer and the layers below it, with the limits each
// layer states. Every package of the module must be in exactly one layer,
// so that a new package is placed on purpose.
type layer struct {
	name     string
	packages func(rel string) bool
	// forbidden reports why the package rel may not depend (directly or
	// not) on dep ("" when it may); drel is dep relative to the module.
	forbidden func(rel, dep, drel string) string
}

const module = "github.com/flotilla-io/flotilla/"

var daemons = []string{"policyd", "schedulerd", "executord", "healthd"}

// under reports whether rel is dir or inside it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// daemonOf returns the daemon whose folder holds rel, or "".
func daemonOf(rel string) string {
	for _, d := range daemons {
		if under(rel, d) {
			return d
		}
	}
	return ""
}

func isNATS(dep string) bool { return strings.HasPrefix(dep, "github.com/nats-io/") }

// io names what a pure package must not reach: a transport, a cluster
// client, a logger or a metrics registry.
func io(dep, drel string) string {
	switch {
	case isNATS(dep) || under(drel, "events/natsbus"):
		return "the bus"
	case strings.HasPrefix(dep, "k8s.io/client-go"):
		return "a cluster client"
	case strings.HasPrefix(dep, "go.uber.org/zap"):
		return "a logger"
	case strings.HasPrefix(dep, "github.com/prometheus/"):
		return "a metrics registry"
	}
	return ""
}

var layers = []layer{
	{
		name: "contract",
		packages: func(rel string) bool {
			return rel == "events" || rel == "events/policy" || rel == "events/policy/interpreter" || rel == "events/sealing" || rel == "events/schemas"
		},
		forbidden: func(rel, dep, drel string) string {
			if what := io(dep, drel); what != "" {
				return "the contract depends on nothing that does I/O, here " + what
			}
			if strings.HasPrefix(dep, module) && !under(drel, "events") {
				return "the contract imports only events/..."
			}
			return ""
		},
	},
	{
		name:      "transport",
		packages:  func(rel string) bool { return rel == "events/natsbus" || rel == "events/eventstest" },
		forbidden: func(rel, dep, drel string) string { return noDaemonOrApp(drel) },
	},
	{
		// Pure libraries: the rules and the decisions, called by the
		// daemons, the CLI and simulate alike.
		name: "library",
		packages: func(rel string) bool {
			return (daemonOf(rel) != "" && rel != daemonOf(rel)) || rel == "readmodel" || rel == "internal/strictyaml"
		},
		forbidden: func(rel, dep, drel string) string {
			if what := io(dep, drel); what != "" {
				return "a pure library does no I/O, here " + what
			}
			if d := daemonOf(drel); d != "" && d != daemonOf(rel) && rel != "readmodel" {
				return "a daemon's library is its own: daemons talk only through events"
			}
			return noDaemonOrApp(drel)
		},
	},
	{
		// What the daemons share for their edges: observability, member
		// cluster access, CPU time.
		name: "daemon support",
		packages: func(rel string) bool {
			return under(rel, "internal") && rel != "internal/strictyaml"
		},
		forbidden: func(rel, dep, drel string) string {
			if isNATS(dep) || under(drel, "events/natsbus") {
				return "daemon support reaches the bus only through the daemons"
			}
			return noDaemonOrApp(drel)
		},
	},
	{
		name:     "daemon",
		packages: func(rel string) bool { return slices.Contains(daemons, rel) },
		forbidden: func(rel, dep, drel string) string {
			if d := daemonOf(drel); d != "" && d != rel {
				return "daemons talk only through events"
			}
			if under(drel, "simulate") || under(drel, "cmd") {
				return "a daemon imports no application"
			}
			return ""
		},
	},
	{
		// Applications: simulate runs the libraries without a bus; the
		// console reads through the Source the CLI gives it; hubd is the
		// CLI's apply and delete driven by a hub's watch (DESIGN.md
		// decision 27), over a pure core (hubd/mirror); the CLI wires
		// everything.
		name: "application",
		packages: func(rel string) bool {
			return under(rel, "simulate") || under(rel, "cmd") || under(rel, "deploy") || under(rel, "console") || under(rel, "hubd")
		},
		forbidden: func(rel, dep, drel string) string {
			if under(rel, "cmd") || under(rel, "deploy") {
				return ""
			}
			if under(rel, "hubd") {
				if slices.Contains(daemons, drel) || under(drel, "simulate") || under(drel, "console") {
					return "hubd talks to the daemons only through events"
				}
				if what := io(dep, drel); what != "" && rel == "hubd/mirror" {
					return "hubd's core does no I/O, here " + what
				}
				return ""
			}
			if under(rel, "console") && (slices.Contains(daemons, drel) || under(drel, "events/natsbus") || isNATS(dep)) {
				return "the console reads the bus only through its Source"
			}
			if slices.Contains(daemons, drel) || under(drel, "events/natsbus") || isNATS(dep) {
				return "simulate runs the rules without a bus or a daemon"
			}
			return ""
		},
	},
}

// noDaemonOrApp forbids the daemons' own packages and the applications to
// the layers below them.
func noDaemonOrApp(drel string) string {
	if slices.Contains(daemons, drel) {
		return "only the CLI wires a daemon"
	}
	if under(drel, "simulate") || under(drel, "cmd") {
		return "a lower layer imports no application"
	}
	return ""
}

func layerOf(rel string) (layer, bool) {
	for _, l := range layers {
		if l.packages(rel) {
			return l, true
		}
	}
	return layer{}, false
}

// TestImportRules keeps the architecture honest: every package sits in one
// layer and depends only on what its layer allows; no non-test package but
// events/natsbus itself imports a github.com/nats-io module.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		pkg, imports, deps := parts[0], strings.Fields(parts[1]), strings.Fields(parts[2])
		rel := strings.TrimPrefix(pkg, module)
		l, ok := layerOf(rel)
		if !ok {
			t.Errorf("%s is in no layer: place it in events/imports_test.go and DESIGN.md decision 17", rel)
			continue
		}
		if rel != "events/natsbus" {
			for _, d := range imports {
				if isNATS(d) {
					t.Errorf("%s imports %s: only events/natsbus talks to NATS", rel, d)
				}
			}
		}
		for _, d := range deps {
			if why := l.forbidden(rel, d, strings.TrimPrefix(d, module)); why != "" {
				t.Errorf("%s (%s) depends on %s: %s", rel, l.name, d, why)
			}
		}
	}
}

// TestLayersCatchWhatTheyShould holds the rules themselves to a few known
// answers, so that a rule loosened by mistake fails here.
func TestLayersCatchWhatTheyShould(t *testing.T) {
	cases := []struct {
		name, rel, dep string
		forbidden      bool
	}{
		{"the contract may not import the bus", "events", module + "events/natsbus", true},
		{"the contract may not import a library", "events/policy", module + "policyd/binding", true},
		{"a scheduler library may not import policyd's", "schedulerd/core", module + "policyd/binding", true},
		{"a library may not log", "policyd/binding", "go.uber.org/zap", true},
		{"a library may use the contract", "schedulerd/core", module + "events/policy", false},
		{"the read model may use every daemon's pure library", "readmodel", module + "schedulerd/failover", false},
		{"the read model may not import a daemon", "readmodel", module + "policyd", true},
		{"a daemon may use the read model", "policyd", module + "readmodel", false},
		{"the read model may not import the bus", "readmodel", module + "events/natsbus", true},
		{"a daemon may not import another daemon's library", "healthd", module + "executord/render", true},
		{"a daemon may use its own library", "policyd", module + "policyd/validation", false},
		{"a daemon may use the bus", "schedulerd", module + "events/natsbus", false},
		{"simulate may not import the bus", "simulate", module + "events/natsbus", true},
		{"simulate may use any library", "simulate", module + "executord/render", false},
		{"the CLI may wire a daemon", "cmd/flotilla", module + "policyd", false},
		{"hubd may not import a daemon", "hubd", module + "policyd", true},
		{"hubd may use the read model", "hubd", module + "readmodel", false},
		{"hubd's core may not reach the hub", "hubd/mirror", "k8s.io/client-go/dynamic", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, ok := layerOf(c.rel)
			if !ok {
				t.Fatalf("%s is in no layer", c.rel)
			}
			got := l.forbidden(c.rel, c.dep, strings.TrimPrefix(c.dep, module)) != ""
			if got != c.forbidden {
				t.Errorf("forbidden = %v, want %v", got, c.forbidden)
			}
		})
	}
}
