package main

import (
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

func newDiff(g *globals) *cobra.Command {
	var m manifestFlags
	c := &cobra.Command{
		Use:   "diff -f FILE|DIR|- [-R] [-n NS]",
		Short: "Show what an apply would change against the accepted objects, as a unified diff",
		Long: `Show, as a unified diff of YAML, what applying the files would change against
the objects policyd accepted (status and server-set metadata left out, as
apply ignores them). A new object is a diff against nothing. A Secret's values
read "***", "*** (before)" and "*** (after)", as in kubectl diff; cluster
credentials (Secrets in karmada-system) are sealed on the bus and not
compared. -n and -R are apply's. Exit status, as kubectl diff: 0 nothing would change, 1 something
would, >1 an error.`,
		Example: "  flotilla diff -f examples/seed000/\n  flotilla get deploy my-app -o yaml | sed 's/replicas: 6/replicas: 9/' | flotilla diff -f -",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := m.load(cmd)
			if err != nil {
				return withExit{err, 2}
			}
			ctx := cmd.Context()
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				p, err := readPublished(ctx, bus)
				if err != nil {
					return withExit{err, 2}
				}
				m.customNamespaces(p, res.Docs)
				differ := 0
				for _, d := range res.Docs {
					readmodel.StripServerFields(d.Object)
					key := events.KeyOf(d.APIVersion, d.Kind, d.Namespace, d.Name)
					name := label(d.Kind, d.APIVersion, d.Name)
					if events.RoleOf(d.APIVersion, d.Kind, d.Namespace) == events.RoleCredentials {
						fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s not compared: cluster credentials are sealed on the bus, so the file cannot be compared with what was accepted\n", name)
						continue
					}
					var accepted map[string]any
					if r, ok := p.Records[key]; ok {
						accepted = readmodel.AppliedObject(r)
					}
					if key.Group == "" && key.Kind == "Secret" {
						accepted, d.Object = maskSecrets(accepted, d.Object)
					}
					before := ""
					if accepted != nil {
						b, err := yaml.Marshal(accepted)
						if err != nil {
							return withExit{err, 2}
						}
						before = string(b)
					}
					after, err := yaml.Marshal(d.Object)
					if err != nil {
						return withExit{err, 2}
					}
					text, err := unifiedDiff(name, before, string(after))
					if err != nil {
						return withExit{err, 2}
					}
					if text != "" {
						differ++
						fmt.Fprint(cmd.OutOrStdout(), text)
					}
				}
				if differ > 0 {
					// Exit status 1, as kubectl diff: the diff said it all.
					return exitError{fmt.Errorf("%d object(s) differ", differ)}
				}
				return nil
			})
		},
	}
	m.addTo(c, "namespace of the namespaced objects whose document names none (an object naming another is an error)")
	_ = c.MarkFlagRequired("filename")
	return c
}

// unifiedDiff is diff -u of an object's accepted and applied YAML, with
// three lines of context.
func unifiedDiff(name, before, after string) (string, error) {
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: diffLines(before), B: diffLines(after),
		FromFile: "accepted/" + name, ToFile: "applied/" + name, Context: 3})
}

// diffLines splits text into the lines a unified diff compares, each with
// its newline. difflib.SplitLines adds an empty last line to text that
// ends in one, which showed as a blank context line and put every hunk
// header one line off ("@@ -1 +1,3 @@" for a new object of two lines,
// where diff -u says "@@ -0,0 +1,2 @@").
func diffLines(text string) []string {
	if text == "" {
		return nil
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	lines := strings.SplitAfter(text, "\n")
	return lines[:len(lines)-1] // the empty string after the last newline
}

// withExit gives an error its exit status.
type withExit struct {
	error
	code int
}

func (e withExit) ExitCode() int { return e.code }
func (e withExit) Unwrap() error { return e.error }

// maskSecrets hides a Secret's values as kubectl diff does: every value of
// data and stringData reads "***", and one that changes "*** (before)" and
// "*** (after)". It returns masked copies (either may be nil: none).
func maskSecrets(before, after map[string]any) (map[string]any, map[string]any) {
	before, after = maps.Clone(before), maps.Clone(after)
	for _, field := range []string{"data", "stringData"} {
		b, _ := before[field].(map[string]any)
		a, _ := after[field].(map[string]any)
		mb, ma := make(map[string]any, len(b)), make(map[string]any, len(a))
		for k, v := range b {
			mb[k] = "***"
			if av, ok := a[k]; ok && !reflect.DeepEqual(av, v) {
				mb[k] = "*** (before)"
			}
		}
		for k, v := range a {
			ma[k] = "***"
			if bv, ok := b[k]; ok && !reflect.DeepEqual(bv, v) {
				ma[k] = "*** (after)"
			}
		}
		if b != nil {
			before[field] = mb
		}
		if a != nil {
			after[field] = ma
		}
	}
	return before, after
}
