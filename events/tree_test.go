package events_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines bounds a non-test Go file: past it a file holds more than
// one idea, and the reader of a rule has to page through others.
const maxFileLines = 600

// eachSource calls fn with every non-test Go file of the module, by its
// path relative to the module root, skipping hidden folders and testdata.
func eachSource(t *testing.T, fn func(rel, path string)) {
	t.Helper()
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			rel, _ := filepath.Rel(root, path)
			fn(rel, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoSourceFileIsLong keeps every non-test Go file of the module at or
// under maxFileLines lines (issue 11), so that later work splits a file
// by what it does instead of growing it.
func TestNoSourceFileIsLong(t *testing.T) {
	eachSource(t, func(rel, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n > maxFileLines {
			t.Errorf("%s has %d lines, over %d: split it by what it does", rel, n, maxFileLines)
		}
	})
}

// TestNoStructKeepsAContext holds the lifecycle rule that a context is
// passed to what blocks, never stored (HOUSE-STYLE.md, Lifecycle): no
// struct type of a non-test Go file has a context.Context field.
func TestNoStructKeepsAContext(t *testing.T) {
	eachSource(t, func(rel, path string) {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				if sel, ok := field.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Context" {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "context" {
						t.Errorf("%s: a struct keeps a context.Context; pass it to the methods that block instead", rel)
					}
				}
			}
			return true
		})
	})
}
