package validation

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flotilla-io/flotilla/internal/strictyaml"
)

// Result is what Load found: every non-empty document in input order
// (including those with errors), and every error and warning, each naming
// its file, document, line and field path. Nothing may be published unless
// Errors is empty.
type Result struct {
	Docs     []Document
	Errors   []Problem
	Warnings []Problem
	// namespace: LoadOptions.Namespace, for the documents still to load.
	namespace string
}

// manifestExts are the file names Load reads from a directory.
var manifestExts = []string{".yaml", ".yml", ".json"}

// Load reads and validates manifests. Each path is a file, a directory (its
// *.yaml, *.yml and *.json files, not recursively, in name order) or "-"
// for stdin (read from the stdin argument; nil reads nothing). A file may
// hold several YAML documents separated by "---" lines, or JSON. Empty
// documents (a lone "---", comments only) are skipped and not counted in
// Document.Index. Unreadable paths and YAML syntax errors are errors naming
// the file (and line); a syntax error ends only the document it is in.
func Load(paths []string, stdin io.Reader) Result { return LoadWith(paths, stdin, LoadOptions{}) }

// LoadOptions are kubectl's -R and -n for LoadWith.
type LoadOptions struct {
	// Recursive reads the manifests of a directory's subdirectories too,
	// in lexical order of their paths.
	Recursive bool
	// Namespace is the namespace of the namespaced objects whose document
	// names none ("": default). Validation applies it as the document's
	// own, so the defaults that follow from it (a policy's selector
	// namespaces) do too.
	Namespace string
	// Fetch reads a path that is an http:// or https:// URL (kubectl's
	// apply -f URL); nil: such a path is refused, naming this.
	Fetch func(url string) ([]byte, error)
}

// isURL reports whether a -f path is a URL to fetch, not a file.
func isURL(p string) bool {
	return strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://")
}

// LoadWith is Load with options.
func LoadWith(paths []string, stdin io.Reader, o LoadOptions) Result {
	res := Result{namespace: o.Namespace}
	for _, in := range ReadInputsWith(paths, stdin, o) {
		if in.Problem != nil {
			res.Errors = append(res.Errors, *in.Problem)
			continue
		}
		res.loadBytes(in.Name, in.Data)
	}
	// Custom resources of a kind a definition loaded with them names.
	scopes := CustomScopes{}
	for _, d := range res.Docs {
		scopes.Add(d.APIVersion, d.Kind, d.Object)
	}
	DefaultNamespaces(res.Docs, scopes, o.Namespace)
	return res
}

// Input is one file Load validates ("-" for stdin), or the problem that
// stopped Load reading a path.
type Input struct {
	Name    string
	Data    []byte
	Problem *Problem
}

// ReadInputs reads what Load validates for paths, in Load's order: the
// files of a directory in name order, an unreadable path or a directory
// without manifests as a Problem. Load validates each Input with
// LoadBytes; a caller that validates pieces of a file concurrently (cut
// with SplitDocuments) starts here.
func ReadInputs(paths []string, stdin io.Reader) []Input {
	return ReadInputsWith(paths, stdin, LoadOptions{})
}

// ReadInputsWith is ReadInputs with LoadWith's -R (o.Recursive) and URL
// fetching (o.Fetch).
func ReadInputsWith(paths []string, stdin io.Reader, o LoadOptions) []Input {
	var out []Input
	for _, p := range paths {
		if isURL(p) {
			if o.Fetch == nil {
				out = append(out, Input{Name: p, Problem: &Problem{File: p, Reason: "a URL is not read here: download it and pass the file"}})
				continue
			}
			data, err := o.Fetch(p)
			if err != nil {
				out = append(out, Input{Name: p, Problem: &Problem{File: p, Reason: err.Error()}})
				continue
			}
			out = append(out, Input{Name: p, Data: data})
			continue
		}
		if p == "-" {
			var data []byte
			if stdin != nil {
				var err error
				if data, err = io.ReadAll(stdin); err != nil {
					out = append(out, Input{Name: p, Problem: &Problem{File: p, Reason: "read: " + err.Error()}})
					continue
				}
			}
			out = append(out, Input{Name: p, Data: data})
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			out = append(out, Input{Name: p, Problem: &Problem{File: p, Reason: pathError(err)}})
			continue
		}
		if !fi.IsDir() {
			out = append(out, readFile(p))
			continue
		}
		files, err := manifestsIn(p, o.Recursive)
		if err != nil {
			out = append(out, Input{Name: p, Problem: &Problem{File: p, Reason: pathError(err)}})
			continue
		}
		for _, f := range files {
			out = append(out, readFile(f))
		}
		if len(files) == 0 {
			reason := "no .yaml, .yml or .json files in the directory"
			if o.Recursive {
				reason = "no .yaml, .yml or .json files in the directory or below it"
			}
			out = append(out, Input{Name: p, Problem: &Problem{File: p, Reason: reason}})
		}
	}
	return out
}

// manifestsIn lists the manifest files of directory dir in name order, and
// with recursive those of its subdirectories too (lexical order of paths).
func manifestsIn(dir string, recursive bool) ([]string, error) {
	root := dir
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		root += string(filepath.Separator) // a link to a directory is walked as the directory
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && path != root && !recursive:
			return fs.SkipDir
		case !e.IsDir() && hasManifestExt(e.Name()):
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

func hasManifestExt(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	for _, e := range manifestExts {
		if ext == e {
			return true
		}
	}
	return false
}

// pathError drops the operation and path that os errors repeat, since the
// problem names the file already.
func pathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func readFile(name string) Input {
	data, err := os.ReadFile(name)
	if err != nil {
		return Input{Name: name, Problem: &Problem{File: name, Reason: pathError(err)}}
	}
	return Input{Name: name, Data: data}
}

// LoadBytes validates one file's contents as Load does, naming the file
// file in every Document and Problem.
func LoadBytes(file string, data []byte) Result {
	var res Result
	res.loadBytes(file, data)
	return res
}

// loadBytes validates every document of one file. A v1 List (what `get
// -o yaml` prints, as kubectl's) stands for its items: each is a Document
// of its own, with the list's document number and its place among the
// items (Document.Item), and its problems' field paths start at the list:
// items[2].spec.replicas.
func (res *Result) loadBytes(file string, data []byte) {
	index := 0
	for _, d := range strictyaml.Parse(file, data) {
		index++
		res.Errors = append(res.Errors, d.Problems...)
		if d.Root == nil {
			continue
		}
		items, isList := listItems(d.Root)
		if !isList {
			res.loadRoot(file, index, 0, d.Root)
			continue
		}
		for i, root := range items {
			res.loadRoot(file, index, i+1, root)
		}
	}
}

// listItems returns the items of a v1 List document; ok is false for any
// other document.
func listItems(root *strictyaml.Node) ([]*strictyaml.Node, bool) {
	kind, apiVersion := root.Get("kind"), root.Get("apiVersion")
	if kind == nil || apiVersion == nil || kind.Kind() != strictyaml.String || kind.Str() != "List" || apiVersion.Str() != "v1" {
		return nil, false
	}
	return root.Get("items").Items(), true
}

// loadRoot validates one document, or item (1-based; 0: not a list's)
// of the list that is document index.
func (res *Result) loadRoot(file string, index, item int, root *strictyaml.Node) {
	doc, rep := validateTree(root, root.Line(), res.namespace)
	byLine(rep.errs)
	byLine(rep.warns)
	doc.File, doc.Index, doc.Item = file, index, item
	res.Docs = append(res.Docs, doc)
	for _, p := range rep.errs {
		res.Errors = append(res.Errors, place(p, file, index, item))
	}
	for _, p := range rep.warns {
		res.Warnings = append(res.Warnings, place(p, file, index, item))
	}
}

// byLine orders a document's problems as the reader meets them.
func byLine(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int { return a.Line - b.Line })
}

// place puts a document's problem in its file: its document number and,
// for an item of a list, the item's path before the field's.
func place(p Problem, file string, index, item int) Problem {
	p.File, p.Document = file, index
	if item > 0 {
		p.Field = joinPath(itemPath(item), p.Field)
	}
	return p
}

// itemPath is the field path of a v1 List's item (1-based) in the list.
func itemPath(item int) string { return "items[" + strconv.Itoa(item-1) + "]" }

func joinPath(parent, field string) string {
	if field == "" {
		return parent
	}
	return parent + "." + field
}
