package simulate

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/cputime"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// benchInput writes a realistic large input: clusters Cluster objects in
// 10 regions (every other one with a resource summary and a full API list,
// the rest without status), one PropagationPolicy per team (10 teams, four
// strategies, each restricted to one or two regions), a
// ClusterOverridePolicy with one registry rule per region, an
// OverridePolicy adding a label, and deployments Deployments spread over
// the teams with 1-12 replicas and resource requests.
func benchInput(tb testing.TB, deployments, clusters int) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "input.yaml")
	if err := os.WriteFile(p, []byte(benchInputText(deployments, clusters)), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestWriteBenchInput writes benchInput's document to the file named by
// FLOTILLA_BENCH_INPUT (10,000 Deployments and 100 clusters, or
// FLOTILLA_BENCH_DEPLOYMENTS / FLOTILLA_BENCH_CLUSTERS), to time the whole
// process:
//
//	FLOTILLA_BENCH_INPUT=/tmp/sim/input.yaml go test -run TestWriteBenchInput ./simulate/
//	go build -o /tmp/flotilla-perf ./cmd/flotilla
//	time /tmp/flotilla-perf simulate -f /tmp/sim -o json > /dev/null
//
// Without the variable it does nothing.
func TestWriteBenchInput(t *testing.T) {
	path := os.Getenv("FLOTILLA_BENCH_INPUT")
	if path == "" {
		t.Skip("FLOTILLA_BENCH_INPUT not set")
	}
	n, c := 10000, 100
	for env, into := range map[string]*int{"FLOTILLA_BENCH_DEPLOYMENTS": &n, "FLOTILLA_BENCH_CLUSTERS": &c} {
		if v := os.Getenv(env); v != "" {
			if _, err := fmt.Sscan(v, into); err != nil {
				t.Fatalf("%s: %v", env, err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(benchInputText(n, c)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func benchInputText(deployments, clusters int) string {
	var sb strings.Builder
	for i := range clusters {
		region := i % 10
		fmt.Fprintf(&sb, `---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: member-%03d
  labels: {env: prod, region: r%d, tier: t%d}
spec:
  apiEndpoint: https://member-%03d.example.com:6443
  provider: aws
  region: r%d
`, i, region, i%3, i, region)
		if i%2 == 0 {
			fmt.Fprintf(&sb, `status:
  apiEnablements:
  - groupVersion: apps/v1
    resources: [{name: deployments, kind: Deployment}]
  - groupVersion: v1
    resources: [{name: services, kind: Service}]
  conditions:
  - {type: Ready, status: "True", reason: ClusterReady, message: ok, lastTransitionTime: "2025-06-01T00:00:00Z"}
  resourceSummary:
    allocatable: {cpu: "%d", memory: 256Gi, pods: "1100"}
    allocated: {cpu: "4", memory: 16Gi, pods: "40"}
`, 32+i%64)
		}
	}
	strategies := []string{
		`    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster: {labelSelector: {matchLabels: {tier: t0}}}
          weight: 3
        - targetCluster: {labelSelector: {matchLabels: {env: prod}}}
          weight: 1`,
		`    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}`,
		`    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Aggregated`,
		`    replicaScheduling: {replicaSchedulingType: Duplicated}
    spreadConstraints:
    - {spreadByField: cluster, maxGroups: 3, minGroups: 1}`,
	}
	for team := range 10 {
		fmt.Fprintf(&sb, `---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: team-%d, namespace: default}
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    labelSelector: {matchLabels: {team: t%d}}
  placement:
    clusterAffinity:
      labelSelector:
        matchExpressions:
        - {key: region, operator: In, values: [r%d, r%d]}
%s
`, team, team, team, (team+1)%10, strategies[team%len(strategies)])
	}
	sb.WriteString(`---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: regional-registry}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  overrideRules:
`)
	for r := range 10 {
		fmt.Fprintf(&sb, `  - targetCluster: {labelSelector: {matchLabels: {region: r%d}}}
    overriders:
      imageOverrider:
      - {component: Registry, operator: replace, value: registry.r%d.example.com}
`, r, r)
	}
	sb.WriteString(`---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: stamp, namespace: default}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  overrideRules:
  - overriders:
      labelsOverrider:
      - {operator: add, value: {stamped: "yes"}}
`)
	for i := range deployments {
		fmt.Fprintf(&sb, `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%05d
  namespace: default
  labels: {app: app-%05d, team: t%d}
spec:
  replicas: %d
  selector:
    matchLabels: {app: app-%05d}
  template:
    metadata:
      labels: {app: app-%05d}
    spec:
      containers:
      - name: main
        image: nginx:1.25.3
        ports: [{containerPort: 8080}]
        resources:
          requests: {cpu: 100m, memory: 128Mi}
`, i, i, i%10, 1+i%12, i, i)
	}
	return sb.String()
}

// simulateFile is the whole command path after flag parsing: read and
// validate the file, simulate, encode the JSON report.
func simulateFile(tb testing.TB, path string, out io.Writer) *Report {
	res := Load([]string{path}, nil)
	if len(res.Errors) > 0 {
		tb.Fatalf("invalid input: %s", validation.Format(res.Errors[0]))
	}
	rep, err := Run(res.Docs)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(out, 1<<16)
	if err := WriteJSON(bw, rep.Results); err != nil {
		tb.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	return rep
}

// BenchmarkSimulate10kDeployments100Clusters measures the whole command
// path of `flotilla simulate -o json` (load and validate, simulate, encode
// the JSON report) in templates per second of wall time, and per second of
// CPU time (steadier on a shared machine). The output is about 200 MB: a
// diagnosis for each of the ~80 clusters filtered out and ~4.6 manifests
// per template.
func BenchmarkSimulate10kDeployments100Clusters(b *testing.B) {
	const n = 10000
	path := benchInput(b, n, 100)
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400)) // as `flotilla simulate` runs
	}
	var placed int
	start, cpu0 := time.Now(), cputime.Process()
	iters := 0
	for b.Loop() {
		rep := simulateFile(b, path, io.Discard)
		placed = 0
		for _, r := range rep.Results {
			if r.Scheduled {
				placed++
			}
			if r.Error != "" && r.Scheduled {
				b.Fatal(r.Error)
			}
		}
		iters++
	}
	elapsed, cpu := time.Since(start), cputime.Process()-cpu0
	if placed < n*9/10 {
		b.Fatalf("only %d of %d templates scheduled", placed, n)
	}
	b.ReportMetric(float64(n*iters)/elapsed.Seconds(), "templates/s")
	if cpu > 0 {
		b.ReportMetric(float64(n*iters)/cpu.Seconds(), "templates/cpu-s")
	}
}

// BenchmarkSimulatePhases splits the same run into its phases.
func BenchmarkSimulatePhases(b *testing.B) {
	const n = 10000
	path := benchInput(b, n, 100)
	res := validation.Load([]string{path}, nil)
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			Load([]string{path}, nil)
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "templates/s")
	})
	var rep *Report
	b.Run("run", func(b *testing.B) {
		for b.Loop() {
			rep, _ = Run(res.Docs)
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "templates/s")
	})
	b.Run("encode", func(b *testing.B) {
		if rep == nil { // -bench 'Phases/encode': run did not run
			rep, _ = Run(res.Docs)
		}
		for b.Loop() {
			_ = WriteJSON(io.Discard, rep.Results)
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "templates/s")
	})
}
