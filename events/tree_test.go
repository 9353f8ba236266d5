package events_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines bounds a non-test Go file: past it a file holds more than
// one idea, and the reader of a rule has to page through others.
const maxFileLines = 600

// TestNoSourceFileIsLong keeps every non-test Go file of the module at or
// under maxFileLines lines (issue 11), so that later work splits a file
// by what it does instead of growing it.
func TestNoSourceFileIsLong(t *testing.T) {
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
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := bytes.Count(b, []byte("\n")); n > maxFileLines {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s has %d lines, over %d: split it by what it does", rel, n, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
