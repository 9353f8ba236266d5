package validation

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/internal/strictyaml"
)

// Problem is one error or warning: where (file, document, line, field
// path) and why.
type Problem = events.FieldError

// Format renders a problem the way the CLI prints it:
//
//	file.yaml: document 2: line 14: spec.placement.replicaScheduling.replicaSchedulingType: unsupported value "Dividd": must be one of Duplicated, Divided
//
// Parts that are unknown (no file, no line, no field) are left out.
func Format(p events.FieldError) string {
	var parts []string
	if p.File != "" {
		parts = append(parts, p.File)
	}
	if p.Document > 0 {
		parts = append(parts, "document "+strconv.Itoa(p.Document))
	}
	if p.Line > 0 {
		parts = append(parts, "line "+strconv.Itoa(p.Line))
	}
	if p.Field != "" {
		parts = append(parts, p.Field)
	}
	parts = append(parts, p.Reason)
	return strings.Join(parts, ": ")
}

// report collects the problems of one document and knows the line of every
// field path the structural check visited.
type report struct {
	lines *strictyaml.Lines
	errs  []Problem
	warns []Problem
}

func newReport(docLine int) *report {
	return &report{lines: strictyaml.NewLines(docLine)}
}

// line returns the line of path, or of its nearest recorded ancestor, or
// the document's line.
func (r *report) line(path string) int { return r.lines.Line(path) }

func (r *report) errorAt(path string, line int, reason string) {
	if line <= 0 {
		line = r.line(path)
	}
	r.errs = append(r.errs, Problem{Field: path, Line: line, Reason: reason})
}

func (r *report) errorf(path, format string, args ...any) {
	r.errorAt(path, 0, fmt.Sprintf(format, args...))
}

func (r *report) warnf(path, format string, args ...any) {
	r.warns = append(r.warns, Problem{Field: path, Line: r.line(path), Reason: fmt.Sprintf(format, args...)})
}

// required reports a missing field.
func (r *report) required(path string) {
	r.errorf(path, "required value")
}

// enum checks a value against its allowed set; empty means unset and is
// accepted unless the caller checks it.
func (r *report) enum(path, got string, allowed ...string) {
	if got == "" {
		return
	}
	for _, a := range allowed {
		if got == a {
			return
		}
	}
	r.errorf(path, "unsupported value %q: must be one of %s", got, strings.Join(allowed, ", "))
}
