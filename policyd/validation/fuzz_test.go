package validation

import (
	"bytes"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the loader: it must never panic, and
// every problem it reports must name the input. Its seed corpus
// (testdata/fuzz/FuzzLoad) holds every example of examples/.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(policyHead))
	f.Add([]byte("a: &x [*x, *x]\nb: *x\n"))
	f.Add([]byte("---\n---\n{\"apiVersion\": 1}\n"))
	f.Add([]byte("apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems: [{a: .inf}]\n"))
	f.Add([]byte("<<: {a: 1}\nx: !!binary aGk=\n? [complex]\n: key\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res := Load([]string{"-"}, bytes.NewReader(data))
		for _, p := range append(res.Errors, res.Warnings...) {
			if p.File != "-" {
				t.Fatalf("problem without the file: %+v", p)
			}
		}
	})
}
