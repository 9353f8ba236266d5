package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/readmodel"
)

// manifestFlags are kubectl's flags for reading manifests, defined once for
// apply, diff and delete: -f (files, directories, URLs, - for stdin), -R
// (directories with their subdirectories) and -n (the namespace of the
// namespaced objects whose document names none; given explicitly, an object
// naming another namespace is an error, as in kubectl).
type manifestFlags struct {
	files     []string
	recursive bool
	namespace string
}

func (m *manifestFlags) addTo(c *cobra.Command, namespaceUsage string) {
	c.Flags().StringArrayVarP(&m.files, "filename", "f", nil, "file, directory, http(s) URL or - (stdin); repeatable")
	c.Flags().BoolVarP(&m.recursive, "recursive", "R", false, "read the directories given with -f with their subdirectories")
	c.Flags().StringVarP(&m.namespace, "namespace", "n", "default", namespaceUsage)
}

// loadVerbs say what an error in the files stopped, per command using load.
var loadVerbs = map[string]string{"apply": "applied", "delete": "deleted", "diff": "compared"}

// load reads and validates the documents in the namespace -n names,
// printing warnings (errors stop here).
func (m *manifestFlags) load(cmd *cobra.Command) (validation.Result, error) {
	res := validation.LoadWith(m.files, cmd.InOrStdin(), validation.LoadOptions{Recursive: m.recursive, Namespace: m.namespace, Fetch: fetchManifests})
	for _, w := range res.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "Warning:", validation.Format(w))
	}
	if len(res.Errors) > 0 {
		for _, e := range res.Errors {
			fmt.Fprintln(cmd.ErrOrStderr(), "error:", validation.Format(e))
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "nothing was %s: %d error(s)\n", loadVerbs[cmd.Name()], len(res.Errors))
		return res, exitError{errors.New("invalid input")}
	}
	if len(res.Docs) == 0 {
		return res, fmt.Errorf("no objects found in %s", strings.Join(m.files, ", "))
	}
	if !cmd.Flags().Changed("namespace") {
		return res, nil
	}
	for _, d := range res.Docs {
		if d.Namespaced && d.Namespace != m.namespace {
			return res, fmt.Errorf("%s: the namespace from the provided object %q does not match the namespace %q: pass -n %s to %s it",
				d.Where(), d.Namespace, m.namespace, d.Namespace, cmd.Name())
		}
	}
	return res, nil
}

// customNamespaces gives the custom resources among docs of a namespaced
// kind, defined by an accepted CustomResourceDefinition or one among docs,
// the namespace of -n when they name none, as Load does for definitions
// loaded with them (validation.DefaultNamespaces).
func (m *manifestFlags) customNamespaces(p readmodel.Published, docs []validation.Document) {
	scopes := validation.AcceptedScopes(p.Records)
	for _, d := range docs {
		scopes.Add(d.APIVersion, d.Kind, d.Object)
	}
	validation.DefaultNamespaces(docs, scopes, m.namespace)
}

// manifestFetchTimeout bounds reading -f URL, as kubectl's request timeout
// would; maxFetchedManifests bounds what is read (the bus refuses larger
// objects anyway).
const (
	manifestFetchTimeout = 30 * time.Second
	maxFetchedManifests  = 64 << 20
)

// fetchManifests reads -f URL (kubectl's apply -f https://...): a GET
// that must answer 200, the reason otherwise.
func fetchManifests(url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), manifestFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("read: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read: GET answered %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchedManifests+1))
	if err != nil {
		return nil, fmt.Errorf("read: %v", err)
	}
	if len(data) > maxFetchedManifests {
		return nil, fmt.Errorf("read: more than %d MiB", maxFetchedManifests>>20)
	}
	return data, nil
}
