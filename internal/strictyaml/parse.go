// Package strictyaml reads YAML the way Flotilla's users' files are read
// everywhere (flotilla apply and simulate, policyd, healthd's
// --taint-policy): into a tree in JSON's data model that knows the line of
// every value, checked strictly against a Go type, every problem naming
// the file, the document, the line and the field path.
//
// Strict means: a duplicate key, an unknown field (matched
// case-sensitively, as the API server's strict decoding does, with the
// nearest known name suggested), a value of the wrong type, an alias that
// contains itself, a document that expands to more than 2^18 values and a
// number JSON cannot hold are each a problem; a syntax error ends only the
// document it is in. The package is pure: no I/O, no logging, and safe for
// concurrent use.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flotilla-io/flotilla/events"
)

// Document is one non-empty document of a YAML stream.
type Document struct {
	// Root is the document's tree; nil when it could not be read at all
	// (a syntax error, an alias that contains itself, too large).
	Root *Node
	// Problems are what reading it found, each with the file, the
	// document's 1-based index among the non-empty documents, the line
	// and, where there is one, the field path. Root may be set as well
	// (a duplicate key is left out of the tree, the rest is read).
	Problems []events.FieldError
}

// Parse reads every document of data, a YAML stream (documents separated
// by "---" lines; JSON is YAML) read from file. Empty documents (a lone
// "---", comments only) are skipped and not counted. Lines are the file's:
// a document's first line is not 1 unless it starts the file.
func Parse(file string, data []byte) []Document {
	var docs []Document
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark
	for _, c := range SplitDocuments(data) {
		dec := yaml.NewDecoder(bytes.NewReader(c.Text))
		for {
			var node yaml.Node
			err := safeDecode(dec, &node)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				docs = append(docs, Document{Problems: []events.FieldError{syntaxProblem(file, len(docs)+1, c.FirstLine, err)}})
				break
			}
			b := &treeBuilder{lineOffset: c.FirstLine - 1, active: map[*yaml.Node]bool{}}
			root := b.build(&node)
			if root != nil && root.kind == Null && len(b.problems) == 0 {
				continue // an empty document
			}
			for i := range b.problems {
				b.problems[i].File, b.problems[i].Document = file, len(docs)+1
			}
			docs = append(docs, Document{Root: root, Problems: b.problems})
		}
	}
	return docs
}

// Chunk is the text of one or more documents, cut at "---" lines so that a
// syntax error in one document does not hide the documents after it.
type Chunk struct {
	Text      []byte
	FirstLine int // 1-based line of Text's first line in the file
}

// SplitDocuments cuts a file at lines that start a YAML document ("---"
// alone or followed by a space, tab or comment). The separator stays with
// the chunk it starts, so YAML still sees it. YAML forbids such a line
// inside a scalar, so the cut never splits a value.
func SplitDocuments(data []byte) []Chunk {
	var out []Chunk
	start, startLine, line := 0, 1, 1
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end >= 0 {
			next = pos + end + 1
		}
		l := data[pos:next]
		if pos > start && isDocumentStart(l) {
			out = append(out, Chunk{data[start:pos], startLine})
			start, startLine = pos, line
		}
		pos = next
		line++
	}
	if start < len(data) || len(out) == 0 {
		out = append(out, Chunk{data[start:], startLine})
	}
	return out
}

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

var yamlErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// safeDecode turns a parser panic (none are known) into an error, so that
// no input can take the CLI or policyd down.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: parser failure: %v", r)
		}
	}()
	return dec.Decode(n)
}

func syntaxProblem(file string, index, firstLine int, err error) events.FieldError {
	p := events.FieldError{File: file, Document: index, Line: firstLine}
	msg := err.Error()
	if m := yamlErrLine.FindStringSubmatch(msg); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			p.Line = firstLine - 1 + n
		}
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	p.Reason = "YAML syntax error: " + msg
	return p
}
