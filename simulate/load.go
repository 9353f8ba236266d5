package simulate

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/flotilla-io/flotilla/policyd/validation"
)

// Load is validation.Load, the validator `flotilla apply` runs, spread over
// every CPU: paths are expanded as Load expands them (a directory's .yaml,
// .yml and .json files in name order, "-" for stdin), large files are cut
// at document boundaries ("---" lines, where Load itself cuts them) and the
// pieces are validated concurrently. The result is the one Load returns:
// the same documents, errors and warnings, in the same order, with the same
// file names, document indexes and lines.
func Load(paths []string, stdin io.Reader) validation.Result {
	var units []loadUnit
	for _, p := range paths {
		units = append(units, expand(p, stdin)...)
	}
	// Cut every file into pieces of about the same size, several per CPU
	// so that the last ones to finish leave little idle.
	total := 0
	for _, u := range units {
		total += len(u.data)
	}
	target := max(minPiece, total/(16*runtime.GOMAXPROCS(0)))
	var pieces []piece
	for ui, u := range units {
		if u.delegate != "" || u.problem != nil {
			pieces = append(pieces, piece{unit: ui})
			continue
		}
		for _, c := range cut(u.data, target) {
			c.unit = ui
			pieces = append(pieces, c)
		}
	}
	results := make([]validation.Result, len(pieces))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range pieces {
		p, u := &pieces[i], &units[pieces[i].unit]
		switch {
		case u.problem != nil:
			results[i].Errors = []validation.Problem{*u.problem}
			continue
		case u.delegate != "":
			results[i] = validation.Load([]string{u.delegate}, nil)
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			results[i] = validation.Load([]string{"-"}, bytes.NewReader(p.data))
		})
	}
	wg.Wait()

	// Merge: name the file, and shift indexes and lines by what the
	// earlier pieces of the same file hold.
	var out validation.Result
	docsBefore, lastUnit := 0, -1
	for i, r := range results {
		p, u := &pieces[i], &units[pieces[i].unit]
		if p.unit != lastUnit {
			docsBefore, lastUnit = 0, p.unit
		}
		if u.delegate != "" || u.problem != nil {
			out.Docs = append(out.Docs, r.Docs...)
			out.Errors = append(out.Errors, r.Errors...)
			out.Warnings = append(out.Warnings, r.Warnings...)
			continue
		}
		count := 0
		for _, d := range r.Docs {
			count = max(count, d.Index)
			d.File, d.Index = u.name, d.Index+docsBefore
			if d.Line > 0 {
				d.Line += p.lineOffset
			}
			out.Docs = append(out.Docs, d)
		}
		shift := func(ps []validation.Problem, into *[]validation.Problem) {
			for _, pr := range ps {
				count = max(count, pr.Document)
				pr.File = u.name
				if pr.Document > 0 {
					pr.Document += docsBefore
				}
				if pr.Line > 0 {
					pr.Line += p.lineOffset
				}
				*into = append(*into, pr)
			}
		}
		shift(r.Errors, &out.Errors)
		shift(r.Warnings, &out.Warnings)
		docsBefore += count
	}
	return out
}

// minPiece is the smallest piece worth a goroutine of its own.
var minPiece = 64 << 10

// loadUnit is one file's bytes, or a path left to validation.Load (a
// directory without manifests, a path that cannot be read: Load words the
// error), or an error already known.
type loadUnit struct {
	name     string
	data     []byte
	delegate string
	problem  *validation.Problem
}

// expand turns one path into the files Load would read, in its order.
func expand(p string, stdin io.Reader) []loadUnit {
	if p == "-" {
		var data []byte
		if stdin != nil {
			var err error
			if data, err = io.ReadAll(stdin); err != nil {
				return []loadUnit{{problem: &validation.Problem{File: p, Reason: "read: " + err.Error()}}}
			}
		}
		return []loadUnit{{name: p, data: data}}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return []loadUnit{{delegate: p}}
	}
	if !fi.IsDir() {
		return []loadUnit{readUnit(p)}
	}
	entries, err := os.ReadDir(p) // sorted by name
	if err != nil {
		return []loadUnit{{delegate: p}}
	}
	var out []loadUnit
	for _, e := range entries {
		if e.IsDir() || !hasManifestExt(e.Name()) {
			continue
		}
		out = append(out, readUnit(filepath.Join(p, e.Name())))
	}
	if len(out) == 0 {
		return []loadUnit{{delegate: p}}
	}
	return out
}

func readUnit(name string) loadUnit {
	data, err := os.ReadFile(name)
	if err != nil {
		reason := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			reason = pe.Err.Error()
		}
		return loadUnit{problem: &validation.Problem{File: name, Reason: reason}}
	}
	return loadUnit{name: name, data: data}
}

func hasManifestExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// piece is part of a file: whole documents, starting at a document start
// line (or at the start of the file).
type piece struct {
	unit       int
	data       []byte
	lineOffset int // lines of the file before the piece
}

// cut splits data into pieces of at least target bytes, only before lines
// that start a YAML document: the places validation.Load cuts a file
// itself (a "---" line: YAML forbids one inside a scalar), so every piece
// parses as it would have in place.
func cut(data []byte, target int) []piece {
	if len(data) < 2*target {
		return []piece{{data: data}}
	}
	var out []piece
	start, startLine, line := 0, 0, 0
	for pos := 0; pos < len(data); {
		next := len(data)
		if end := bytes.IndexByte(data[pos:], '\n'); end >= 0 {
			next = pos + end + 1
		}
		if pos-start >= target && isDocumentStart(data[pos:next]) {
			out = append(out, piece{data: data[start:pos], lineOffset: startLine})
			start, startLine = pos, line
		}
		pos = next
		line++
	}
	return append(out, piece{data: data[start:], lineOffset: startLine})
}

// isDocumentStart is validation's rule: "---" alone or followed by a
// space, tab or line end.
func isDocumentStart(l []byte) bool {
	if !bytes.HasPrefix(l, []byte("---")) {
		return false
	}
	if len(l) == 3 {
		return true
	}
	switch l[3] {
	case ' ', '\t', '\r', '\n':
		return true
	}
	return false
}
