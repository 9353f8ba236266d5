package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// update rewrites the golden files: go test ./cmd/flotilla -run TestGolden -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenDir holds the golden outputs (<case>.golden.json) and, in
// <case>/, the inputs a case needs beyond ../shared/examples.
const goldenDir = "testdata/golden"

// goldenCase is one seed placement (issue 3's "Done when"): the simulate
// input, the golden file that holds its whole -o json output, and the
// headline facts checked in Go, so that a regenerated golden file cannot
// bless a wrong placement.
type goldenCase struct {
	name   string   // the sentence the subtest is named by
	golden string   // testdata/golden/<golden>.golden.json
	inputs []string // -f paths, relative to this package
	check  func(t *testing.T, o simOutput, clusters map[string]goldenCluster)
}

// goldenCluster is what a case's assertions need to know about a Cluster
// in its input.
type goldenCluster struct {
	Labels map[string]string
	Region string // spec.region
}

func goldenCases() []goldenCase {
	seed := func(dir, file string) string { return filepath.Join(examples, dir, file) }
	local := func(c, file string) string { return filepath.Join(goldenDir, c, file) }
	return []goldenCase{
		{
			name:   "seed 000's my-app with 6 replicas goes 3 to cluster1, 2 to cluster2 and 1 to cluster3",
			golden: "seed000-my-app",
			inputs: []string{
				seed("seed000", "my-app.yaml"),
				seed("seed000", "propagation-policy.yaml"),
				seed("seed000", "override-policy.yaml"),
				local("seed000-my-app", "clusters.yaml"),
			},
			check: func(t *testing.T, o simOutput, _ map[string]goldenCluster) {
				d := scheduledBy(t, o, "Deployment", "my-app", "my-app-policy")
				want := map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1}
				if got := placement(d); !reflect.DeepEqual(got, want) {
					t.Errorf("my-app placement = %v, want %v", got, want)
				}
				manifestReplicas(t, d)
				s := scheduledBy(t, o, "Service", "my-app", "my-app-policy")
				if got, want := placement(s), map[string]int32{"cluster1": 0, "cluster2": 0, "cluster3": 0}; !reflect.DeepEqual(got, want) {
					t.Errorf("my-app Service placement = %v, want %v (every cluster, no replicas)", got, want)
				}
			},
		},
		{
			name:   "seed 002's nginx-web with 10 replicas goes 6 to aws-prod and 4 to azure-staging",
			golden: "seed002-nginx-web",
			inputs: []string{
				seed("seed002", "clusters.yaml"),
				local("seed002-nginx-web", "azure-staging.yaml"),
				seed("seed002", "nginx-global.yaml"),
				seed("seed002", "storage-override.yaml"),
			},
			check: func(t *testing.T, o simOutput, _ map[string]goldenCluster) {
				if len(o.Results) != 1 {
					t.Errorf("want one result, nginx-web (the kubeconfig Secret is not a template): %d", len(o.Results))
				}
				d := scheduledBy(t, o, "Deployment", "nginx-web", "nginx-global")
				want := map[string]int32{"aws-prod": 6, "azure-staging": 4}
				if got := placement(d); !reflect.DeepEqual(got, want) {
					t.Errorf("nginx-web placement = %v, want %v", got, want)
				}
				manifestReplicas(t, d)
			},
		},
		{
			name:   "seed 004's canary sends 8 of frontend's 10 replicas to aws-prod and 2 to azure-staging",
			golden: "seed004-canary",
			inputs: []string{
				seed("seed004", "cluster.yaml"),
				local("seed004-canary", "azure-staging.yaml"),
				seed("seed004", "canary-release.yaml"),
			},
			check: func(t *testing.T, o simOutput, _ map[string]goldenCluster) {
				d := scheduledBy(t, o, "Deployment", "frontend", "canary-release")
				want := map[string]int32{"aws-prod": 8, "azure-staging": 2}
				if got := placement(d); !reflect.DeepEqual(got, want) {
					t.Errorf("frontend placement = %v, want %v", got, want)
				}
				manifestReplicas(t, d)
			},
		},
		{
			name:   "seed 004's region spread keeps a region-sensitive workload in one region",
			golden: "seed004-region-spread",
			inputs: []string{
				seed("seed004", "cluster.yaml"),
				local("seed004-region-spread", "clusters.yaml"),
				seed("seed004", "tuning.yaml"),
				local("seed004-region-spread", "deployment.yaml"),
			},
			check: func(t *testing.T, o simOutput, clusters map[string]goldenCluster) {
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
			name:   "seed 004's cost-tier preference puts a one-cluster workload on a cost-tier low cluster",
			golden: "seed004-cost-tier",
			inputs: []string{
				seed("seed004", "cluster.yaml"),
				local("seed004-cost-tier", "clusters.yaml"),
				seed("seed004", "tuning.yaml"),
				local("seed004-cost-tier", "deployment.yaml"),
			},
			check: func(t *testing.T, o simOutput, clusters map[string]goldenCluster) {
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
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{}
			for _, in := range tc.inputs {
				args = append(args, "-f", in)
			}
			args = append(args, "-o", "json")
			got := goldenRun(t, args)
			if again := goldenRun(t, args); !bytes.Equal(got, again) {
				t.Fatalf("two runs over the same input differ:\n%s", firstDifference(got, again))
			}

			// The headline facts, independently of the golden file.
			var o simOutput
			if err := json.Unmarshal(got, &o); err != nil {
				t.Fatal(err)
			}
			tc.check(t, o, goldenClusters(t, tc.inputs))

			path := filepath.Join(goldenDir, tc.golden+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/flotilla -run TestGolden -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("simulate output differs from %s (if the change is intended, rerun with -update and review the diff):\n%s", path, firstDifference(want, got))
			}
		})
	}
}

// goldenRun runs simulate in-process and returns its output normalised:
// decoded and re-encoded by encoding/json (keys sorted, two-space indent,
// numbers as written) with any RFC 3339 timestamp replaced by
// "<timestamp>", so that the file is stable and a timestamp that appears
// still shows up in a diff as a new key.
func goldenRun(t *testing.T, args []string) []byte {
	t.Helper()
	out, stderr, err := runSimulate(t, "", args...)
	if err != nil {
		t.Fatalf("simulate %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr)
	}
	dec := json.NewDecoder(strings.NewReader(out))
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
	return append(b, '\n')
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

// goldenClusters reads the Cluster objects among the input files.
func goldenClusters(t *testing.T, files []string) map[string]goldenCluster {
	t.Helper()
	out := map[string]goldenCluster{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range splitYAML(string(b)) {
			var obj struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name   string            `json:"name"`
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
				Spec struct {
					Region string `json:"region"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatalf("%s document %d: %v", f, i+1, err)
			}
			if obj.Kind == "Cluster" {
				out[obj.Metadata.Name] = goldenCluster{Labels: obj.Metadata.Labels, Region: obj.Spec.Region}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no Cluster objects in %v", files)
	}
	return out
}

func splitYAML(s string) []string {
	var docs []string
	var cur []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.TrimRight(line, " \t\r") == "---" {
			docs = append(docs, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return append(docs, strings.Join(cur, "\n"))
}

// scheduledBy finds KIND/NAME and checks that POLICY (a PropagationPolicy
// in default) placed it without an error.
func scheduledBy(t *testing.T, o simOutput, kind, name, policy string) simResult {
	t.Helper()
	r := find(t, o, kind, name)
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
	for _, c := range r.Clusters {
		if !slices.Contains(r.Feasible, c.Name) {
			t.Errorf("%s %s placed on %s, which is not feasible (%v)", kind, name, c.Name, r.Feasible)
		}
	}
	return r
}

// manifestReplicas checks that every placed cluster has a manifest whose
// spec.replicas is its share.
func manifestReplicas(t *testing.T, r simResult) {
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

// firstDifference shows the first line where want and got differ, with a
// little context.
func firstDifference(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	from := max(0, i-3)
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d (want %d lines, got %d)\n", i+1, len(w), len(g))
	for j := from; j < min(len(w), i+4); j++ {
		fmt.Fprintf(&b, "  want %4d: %s\n", j+1, w[j])
	}
	for j := from; j < min(len(g), i+4); j++ {
		fmt.Fprintf(&b, "  got  %4d: %s\n", j+1, g[j])
	}
	return b.String()
}
