package simulate

import (
	"github.com/flotilla-io/flotilla/internal/strictyaml"
	"io"
	"runtime"
	"sync"

	"github.com/flotilla-io/flotilla/policyd/validation"
)

// Load is validation.Load, the validator `flotilla apply` runs, spread over
// every CPU: validation reads the inputs and cuts each file where it cuts
// documents itself (strictyaml.SplitDocuments), the pieces are validated
// concurrently with validation.LoadBytes, and the results are renumbered
// as if each file had been validated whole. The result is the one Load
// returns: the same documents, errors and warnings, in the same order,
// with the same file names, document indexes and lines.
// TestLoadMatchesValidationLoad holds it to that.
//
// Validation is about half of a large simulation's CPU time; on a
// machine with more than one CPU this is the fast path docs/performance.md
// measures.
func Load(paths []string, stdin io.Reader) validation.Result {
	return LoadWith(paths, stdin, validation.LoadOptions{})
}

// LoadWith is Load reading directories with their subdirectories
// (o.Recursive) and URLs (o.Fetch), as validation.LoadWith does.
func LoadWith(paths []string, stdin io.Reader, o validation.LoadOptions) validation.Result {
	inputs := validation.ReadInputsWith(paths, stdin, o)
	// Cut every file into pieces of about the same size, several per CPU
	// so that the last ones to finish leave little idle.
	total := 0
	for _, in := range inputs {
		total += len(in.Data)
	}
	target := max(minPiece, total/(16*runtime.GOMAXPROCS(0)))
	var pieces []piece
	for i, in := range inputs {
		if in.Problem != nil {
			pieces = append(pieces, piece{input: i})
			continue
		}
		for _, p := range cut(in.Data, target) {
			p.input = i
			pieces = append(pieces, p)
		}
	}
	results := make([]validation.Result, len(pieces))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range pieces {
		p, in := &pieces[i], &inputs[pieces[i].input]
		if in.Problem != nil {
			results[i].Errors = []validation.Problem{*in.Problem}
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			results[i] = validation.LoadBytes(in.Name, p.data)
		})
	}
	wg.Wait()

	// Merge: shift indexes and lines by what the earlier pieces of the
	// same file hold.
	var out validation.Result
	docsBefore, lastInput := 0, -1
	for i, r := range results {
		p := &pieces[i]
		if p.input != lastInput {
			docsBefore, lastInput = 0, p.input
		}
		count := 0
		for _, d := range r.Docs {
			count = max(count, d.Index)
			d.Index += docsBefore
			if d.Line > 0 {
				d.Line += p.lineOffset
			}
			out.Docs = append(out.Docs, d)
		}
		shift := func(ps []validation.Problem, into *[]validation.Problem) {
			for _, pr := range ps {
				count = max(count, pr.Document)
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

// piece is part of an input: whole documents, starting where
// strictyaml.SplitDocuments starts one (or at the start of the file).
type piece struct {
	input      int
	data       []byte
	lineOffset int // lines of the file before the piece
}

// cut groups the documents of data into pieces of at least target bytes
// (the last may be smaller).
func cut(data []byte, target int) []piece {
	if len(data) < 2*target {
		return []piece{{data: data}}
	}
	var out []piece
	start, startLine := 0, 1
	pos := 0
	for _, c := range strictyaml.SplitDocuments(data) {
		if pos-start >= target {
			out = append(out, piece{data: data[start:pos], lineOffset: startLine - 1})
			start, startLine = pos, c.FirstLine
		}
		pos += len(c.Text)
	}
	return append(out, piece{data: data[start:], lineOffset: startLine - 1})
}
