package core_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/simulate"
)

// examples is the repository's examples/ folder: the seed scenarios as
// whole objects.
const examples = "../../examples"

// scenarioDir holds one folder per scheduling scenario: the inputs it needs
// beyond examples/ and result.golden.json, the scenario's simulate result
// (what `flotilla simulate -o json` prints), normalised by normalise.
const scenarioDir = "testdata/scenarios"

// scenario is one seed placement: simulate's inputs, the folder of its
// golden result, and the headline facts checked in Go, so that a rewritten
// golden file cannot bless a wrong placement.
type scenario struct {
	name   string   // the sentence the subtest is named by
	dir    string   // testdata/scenarios/<dir>
	inputs []string // simulate's input files, relative to this package
	check  func(t *testing.T, o output, clusters map[string]clusterFacts)
}

// output is simulate's JSON result, decoded.
type output struct {
	Results []simulate.Result `json:"results"`
}

// clusterFacts is what a scenario's checks need to know about a Cluster in
// its input.
type clusterFacts struct {
	Labels map[string]string
	Region string // spec.region
}

func scenarios() []scenario {
	seed := func(dir, file string) string { return filepath.Join(examples, dir, file) }
	local := func(dir, file string) string { return filepath.Join(scenarioDir, dir, file) }
	return append([]scenario{
		{
			name: "seed 000's my-app with 6 replicas goes 3 to cluster1, 2 to cluster2 and 1 to cluster3",
			dir:  "seed000-my-app",
			inputs: []string{
				seed("seed000", "my-app.yaml"),
				seed("seed000", "propagation-policy.yaml"),
				seed("seed000", "override-policy.yaml"),
				local("seed000-my-app", "clusters.yaml"),
			},
			check: func(t *testing.T, o output, _ map[string]clusterFacts) {
				placedAs("Deployment", "my-app", "my-app-policy", map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1})(t, o, nil)
				// Every cluster, no replicas.
				s := scheduledBy(t, o, "Service", "my-app", "my-app-policy")
				checkPlacement(t, s, map[string]int32{"cluster1": 0, "cluster2": 0, "cluster3": 0})
			},
		},
		{
			name: "seed 002's nginx-web with 10 replicas goes 6 to aws-prod and 4 to azure-staging",
			dir:  "seed002-nginx-web",
			inputs: []string{
				seed("seed002", "clusters.yaml"),
				local("seed002-nginx-web", "azure-staging.yaml"),
				seed("seed002", "nginx-global.yaml"),
				seed("seed002", "storage-override.yaml"),
			},
			check: func(t *testing.T, o output, _ map[string]clusterFacts) {
				if len(o.Results) != 1 {
					t.Errorf("want one result, nginx-web (the kubeconfig Secret is not a template): %d", len(o.Results))
				}
				placedAs("Deployment", "nginx-web", "nginx-global", map[string]int32{"aws-prod": 6, "azure-staging": 4})(t, o, nil)
			},
		},
		{
			name: "seed 004's canary sends 8 of frontend's 10 replicas to aws-prod and 2 to azure-staging",
			dir:  "seed004-canary",
			inputs: []string{
				seed("seed004", "cluster.yaml"),
				local("seed004-canary", "azure-staging.yaml"),
				seed("seed004", "canary-release.yaml"),
			},
			check: placedAs("Deployment", "frontend", "canary-release", map[string]int32{"aws-prod": 8, "azure-staging": 2}),
		},
		{
			name: "seed 004's region spread keeps a region-sensitive workload in one region",
			dir:  "seed004-region-spread",
			inputs: []string{
				seed("seed004", "cluster.yaml"),
				local("seed004-region-spread", "clusters.yaml"),
				seed("seed004", "tuning.yaml"),
				local("seed004-region-spread", "deployment.yaml"),
			},
			check: func(t *testing.T, o output, clusters map[string]clusterFacts) {
				d := scheduledBy(t, o, "Deployment", "checkout", "region-sensitive")
				if len(d.Clusters) == 0 {
					t.Fatalf("checkout placed nowhere")
				}
				feasibleRegions := map[string]bool{}
				for _, c := range d.Feasible {
					feasibleRegions[clusters[c].Labels["region"]] = true
				}
				if len(feasibleRegions) < 2 {
					t.Fatalf("the input must offer more than one region for the spread to choose from; feasible %v", d.Feasible)
				}
				region := clusters[d.Clusters[0].Name].Labels["region"]
				if region == "" {
					t.Fatalf("%s has no region label", d.Clusters[0].Name)
				}
				for _, c := range d.Clusters {
					if got := clusters[c.Name].Labels["region"]; got != region {
						t.Errorf("checkout spans regions: %s is in %q, %s in %q (placement %v)", d.Clusters[0].Name, region, c.Name, got, placement(d))
					}
					if got := clusters[c.Name].Region; got != region {
						t.Errorf("%s: spec.region %q differs from its region label %q", c.Name, got, region)
					}
					// No replicaScheduling: Duplicated, as in Karmada.
					if c.Replicas != 4 {
						t.Errorf("%s gets %d replicas, want all 4 (Duplicated)", c.Name, c.Replicas)
					}
				}
				manifestReplicas(t, d)
			},
		},
		{
			name: "seed 004's cost-tier preference puts a one-cluster workload on a cost-tier low cluster",
			dir:  "seed004-cost-tier",
			inputs: []string{
				seed("seed004", "cluster.yaml"),
				local("seed004-cost-tier", "clusters.yaml"),
				seed("seed004", "tuning.yaml"),
				local("seed004-cost-tier", "deployment.yaml"),
			},
			check: func(t *testing.T, o output, clusters map[string]clusterFacts) {
				d := scheduledBy(t, o, "Deployment", "batch-report", "cost-optimised")
				others := 0
				for _, c := range d.Feasible {
					if clusters[c].Labels["cost-tier"] != "low" {
						others++
					}
				}
				if others == 0 {
					t.Fatalf("the input must offer clusters that are not cost-tier low; feasible %v", d.Feasible)
				}
				if len(d.Clusters) != 1 {
					t.Fatalf("batch-report placement = %v, want exactly one cluster (spread of one cluster)", placement(d))
				}
				c := d.Clusters[0]
				if got := clusters[c.Name].Labels["cost-tier"]; got != "low" {
					t.Errorf("batch-report went to %s (cost-tier %q), want a cost-tier low cluster", c.Name, got)
				}
				if c.Replicas != 3 {
					t.Errorf("%s gets %d replicas, want all 3", c.Name, c.Replicas)
				}
				manifestReplicas(t, d)
			},
		},
	}, append(featureScenarios(), interpreterScenarios()...)...)
}

// TestScenarios runs each seed scenario through simulate (policyd's claim,
// this package's scheduler, executord's renderer) and compares the result
// with the scenario's golden file. Rewrite the golden files only for an
// intended change, and review their diff:
//
//	go test ./schedulerd/core/ -run TestScenarios -update
func TestScenarios(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			docs := load(t, sc.inputs)
			got := simulateJSON(t, docs)
			if again := simulateJSON(t, docs); again != got {
				t.Fatalf("two runs over the same input differ (-first +second):\n%s", cmp.Diff(got, again))
			}

			// The headline facts, independently of the golden file.
			var o output
			if err := json.Unmarshal([]byte(got), &o); err != nil {
				t.Fatal(err)
			}
			sc.check(t, o, clusterFactsOf(t, docs))

			path := filepath.Join(scenarioDir, sc.dir, "result.golden.json")
			if core.Update() {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./schedulerd/core/ -run TestScenarios -update to write it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("the result differs from %s (-want +got); if the change is intended, rerun with -update and review the diff:\n%s", path, diff)
			}
		})
	}
}

// load validates the input files as `flotilla simulate` does; any error
// fails the test.
func load(t *testing.T, files []string) []validation.Document {
	t.Helper()
	res := simulate.Load(files, nil)
	for _, e := range res.Errors {
		t.Errorf("%s", validation.Format(e))
	}
	if len(res.Errors) > 0 || len(res.Docs) == 0 {
		t.Fatalf("no input to simulate from %v", files)
	}
	return res.Docs
}

// simulateJSON simulates docs and returns the result as `flotilla simulate
// -o json` prints it, normalised.
func simulateJSON(t *testing.T, docs []validation.Document) string {
	t.Helper()
	rep, err := simulate.Run(docs)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := simulate.WriteJSON(&buf, rep.Results); err != nil {
		t.Fatal(err)
	}
	return normalise(t, buf.Bytes())
}

// normalise decodes simulate's JSON and encodes it again with encoding/json
// (keys sorted, two-space indent, numbers as written) with any RFC 3339
// timestamp replaced by "<timestamp>", so that the golden file is stable,
// one value per line, and a timestamp that appears still shows in a diff
// as a new key.
func normalise(t *testing.T, out []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("output is not JSON: %v\n%.2000s", err, out)
	}
	if dec.More() {
		t.Fatalf("output has more than one JSON value:\n%.2000s", out)
	}
	b, err := json.MarshalIndent(redactTimestamps(v), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func redactTimestamps(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = redactTimestamps(e)
		}
	case []any:
		for i, e := range x {
			x[i] = redactTimestamps(e)
		}
	case string:
		if _, err := time.Parse(time.RFC3339, x); err == nil {
			return "<timestamp>"
		}
	}
	return v
}

// clusterFactsOf reads the Cluster objects among the input documents.
func clusterFactsOf(t *testing.T, docs []validation.Document) map[string]clusterFacts {
	t.Helper()
	out := map[string]clusterFacts{}
	for _, d := range docs {
		if d.Kind != "Cluster" {
			continue
		}
		var obj struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec struct {
				Region string `json:"region"`
			} `json:"spec"`
		}
		b, err := json.Marshal(d.Object)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &obj); err != nil {
			t.Fatalf("Cluster %s: %v", d.Name, err)
		}
		out[d.Name] = clusterFacts{Labels: obj.Metadata.Labels, Region: obj.Spec.Region}
	}
	if len(out) == 0 {
		t.Fatalf("no Cluster objects in the input")
	}
	return out
}

// scheduledBy finds KIND/NAME and checks that POLICY (a PropagationPolicy
// in default) placed it without an error, on feasible clusters sorted by
// name.
func scheduledBy(t *testing.T, o output, kind, name, policy string) simulate.Result {
	t.Helper()
	i := slices.IndexFunc(o.Results, func(r simulate.Result) bool { return r.Resource.Kind == kind && r.Resource.Name == name })
	if i < 0 {
		t.Fatalf("no result for %s %s", kind, name)
	}
	r := o.Results[i]
	if !r.Scheduled || r.Error != "" {
		t.Fatalf("%s %s not scheduled: %q (diagnosis %v)", kind, name, r.Error, r.Diagnosis)
	}
	if p := r.Policy; p == nil || p.Kind != "PropagationPolicy" || p.Namespace != "default" || p.Name != policy {
		t.Errorf("%s %s policy = %+v, want PropagationPolicy default/%s", kind, name, r.Policy, policy)
	}
	names := make([]string, len(r.Clusters))
	for i, c := range r.Clusters {
		names[i] = c.Name
	}
	if !slices.IsSorted(names) {
		t.Errorf("%s %s clusters not sorted by name: %+v", kind, name, r.Clusters)
	}
	for _, c := range names {
		if !slices.Contains(r.Feasible, c) {
			t.Errorf("%s %s placed on %s, which is not feasible (%v)", kind, name, c, r.Feasible)
		}
	}
	return r
}

func placement(r simulate.Result) map[string]int32 {
	out := map[string]int32{}
	for _, c := range r.Clusters {
		out[c.Name] = c.Replicas
	}
	return out
}

// placedAs checks that POLICY placed KIND/NAME as want says, with a manifest
// per cluster holding its share.
func placedAs(kind, name, policy string, want map[string]int32) func(*testing.T, output, map[string]clusterFacts) {
	return func(t *testing.T, o output, _ map[string]clusterFacts) {
		t.Helper()
		r := scheduledBy(t, o, kind, name, policy)
		checkPlacement(t, r, want)
		manifestReplicas(t, r)
	}
}

func checkPlacement(t *testing.T, r simulate.Result, want map[string]int32) {
	t.Helper()
	if diff := cmp.Diff(want, placement(r)); diff != "" {
		t.Errorf("%s %s placement (-want +got):\n%s", r.Resource.Kind, r.Resource.Name, diff)
	}
}

// manifestReplicas checks that every placed cluster has a manifest whose
// spec.replicas is its share.
func manifestReplicas(t *testing.T, r simulate.Result) {
	t.Helper()
	if len(r.Manifests) != len(r.Clusters) {
		t.Errorf("%d manifests for %d clusters: %v", len(r.Manifests), len(r.Clusters), placement(r))
	}
	for _, c := range r.Clusters {
		spec, _ := r.Manifests[c.Name]["spec"].(map[string]any)
		if got := spec["replicas"]; got != float64(c.Replicas) {
			t.Errorf("%s manifest spec.replicas = %v, want %d", c.Name, got, c.Replicas)
		}
	}
}

// A scenario folder without a scenario would be a golden file that nothing
// checks.
func TestEveryScenarioFolderHasAScenario(t *testing.T) {
	entries, err := os.ReadDir(scenarioDir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs, named []string
	for _, e := range entries {
		dirs = append(dirs, e.Name())
	}
	for _, sc := range scenarios() {
		named = append(named, sc.dir)
	}
	slices.Sort(named)
	if diff := cmp.Diff(named, dirs); diff != "" {
		t.Errorf("folders under %s (-scenarios +folders):\n%s", scenarioDir, diff)
	}
}
