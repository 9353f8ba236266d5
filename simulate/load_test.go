package simulate

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/policyd/validation"
)

// Load must return what validation.Load returns, however the files are cut.
func TestLoadMatchesValidationLoad(t *testing.T) {
	dir := t.TempDir()
	big, err := os.ReadFile(benchInput(t, 120, 12))
	if err != nil {
		t.Fatal(err)
	}
	// Errors and warnings in several pieces: an unknown field, a YAML
	// syntax error, a seed spelling, empty documents.
	src := string(big)
	src = strings.Replace(src, "  replicas: 5\n", "  replicas: 5\n  replica: 1\n", 1)
	src = strings.Replace(src, "name: app-00060\n", "name: app-00060\n  labels: [oops\n", 1)
	src = strings.Replace(src, "name: app-00090\n", "name: app-00090\n---\n# only a comment\n---\n", 1)
	src += "---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: seed}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: Service}]\n  placement:\n    replicaScheduling:\n      weightPreference:\n        staticClusterWeight: [{targetCluster: {clusterNames: [a]}, weight: 1}]\n"
	files := map[string]string{"a.yaml": src, "b.yml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "c.json": `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}`, "ignored.txt": "x"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	empty := t.TempDir()
	old := minPiece
	defer func() { minPiece = old }()
	for _, mp := range []int{1, 1000, old} {
		minPiece = mp
		for _, paths := range [][]string{{dir}, {filepath.Join(dir, "a.yaml"), "-", "-"}, {empty, filepath.Join(dir, "missing.yaml")}} {
			want := validation.Load(paths, strings.NewReader(src))
			got := Load(paths, strings.NewReader(src))
			if len(want.Errors) == 0 && len(paths) < 3 {
				t.Fatal("the test input should have errors")
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("minPiece %d, paths %v: Load differs from validation.Load:\n%s", mp, paths, diffResults(got, want))
			}
		}
	}
}

func diffResults(got, want validation.Result) string {
	var sb strings.Builder
	if len(got.Docs) != len(want.Docs) {
		sb.WriteString("docs: " + itoa(len(got.Docs)) + " vs " + itoa(len(want.Docs)) + "\n")
	}
	for i := range min(len(got.Docs), len(want.Docs)) {
		g, w := got.Docs[i], want.Docs[i]
		if g.File != w.File || g.Index != w.Index || g.Line != w.Line || g.Name != w.Name {
			sb.WriteString("doc " + itoa(i) + ": " + g.File + ":" + itoa(g.Index) + ":" + itoa(g.Line) + " vs " + w.File + ":" + itoa(w.Index) + ":" + itoa(w.Line) + "\n")
			break
		}
	}
	for name, ps := range map[string][2][]validation.Problem{"errors": {got.Errors, want.Errors}, "warnings": {got.Warnings, want.Warnings}} {
		if !reflect.DeepEqual(ps[0], ps[1]) {
			sb.WriteString(name + ":\n")
			for _, p := range ps[0] {
				sb.WriteString("  got  " + validation.Format(p) + "\n")
			}
			for _, p := range ps[1] {
				sb.WriteString("  want " + validation.Format(p) + "\n")
			}
		}
	}
	return sb.String()
}

func itoa(i int) string { return strconv.Itoa(i) }
