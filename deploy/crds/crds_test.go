package crds

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite deploy/crds from the Go types")

// TestCRDsAreWhatTheGoTypesGenerate: deploy/crds holds exactly the
// generated CRDs (go test ./deploy/crds -update rewrites them), so the
// hub's schemas never drift from the types Flotilla decodes.
func TestCRDsAreWhatTheGoTypesGenerate(t *testing.T) {
	want, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		old, _ := os.ReadDir(".")
		for _, e := range old {
			if strings.HasSuffix(e.Name(), ".yaml") {
				_ = os.Remove(e.Name())
			}
		}
		for name, b := range want {
			if err := os.WriteFile(name, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names, wantNames []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			names = append(names, e.Name())
		}
	}
	for n := range want {
		wantNames = append(wantNames, n)
	}
	slices.Sort(wantNames)
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Fatalf("CRD files (-generated +present); run go test ./deploy/crds -update:\n%s", diff)
	}
	for _, n := range wantNames {
		got, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want[n]), string(got)); diff != "" {
			t.Errorf("%s drifted from the Go types (-generated +file); run go test ./deploy/crds -update:\n%s", n, diff)
		}
	}
}
