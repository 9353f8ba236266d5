package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// A structured CloudEvent applying a ConfigMap; REPLACE stands for the
// value of data.data.colour.
const publishedEvent = `{"specversion":"1.0","type":"io.flotilla.object.applied.v1","source":"/ci","id":"ci-1",
 "data":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"paint","namespace":"shop"},"data":{"colour":"REPLACE"}}}`

// storedInputs returns, per input subject, the colour of every ConfigMap
// stored on it, oldest first.
func storedInputs(t *testing.T, bus *natsbus.Bus) map[string][]string {
	t.Helper()
	ms, err := bus.Replay(context.Background(), events.StreamInput, natsbus.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, m := range ms {
		var cm struct {
			Data map[string]string `json:"data"`
		}
		if m.Err != nil || events.Decode(m.Event, &cm) != nil {
			t.Fatalf("stored input %d is not an object: %v", m.Sequence, m.Err)
		}
		got[m.Subject] = append(got[m.Subject], cm.Data["colour"])
	}
	return got
}

func writeEvent(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const paintSubject = "flotilla.input.shop.core.ConfigMap.paint"

// JetStream drops an event whose id it has already stored; publish says so
// and exits non-zero instead of printing "published". With
// --allow-duplicates a retry of the same event succeeds, and anything else
// under the same id is still refused.
func TestPublishRefusesAnEventWhoseIdIsAlreadyStoredUnlessItIsAnIdenticalRetry(t *testing.T) {
	red := strings.Replace(publishedEvent, "REPLACE", "red", 1)
	for _, c := range []struct {
		name    string
		second  string   // the event published after red
		flags   []string // flags of the second publish
		wantErr string   // "" when the second publish succeeds
		wantOut string
	}{
		{
			name:    "the same event again is refused by default",
			second:  red,
			wantErr: `event 1 (id "ci-1"): duplicate id, not stored`,
		},
		{
			name:    "different content under the same id is refused",
			second:  strings.Replace(publishedEvent, "REPLACE", "blue", 1),
			wantErr: "duplicate id, not stored",
		},
		{
			name:    "the same event again is accepted with --allow-duplicates",
			second:  red,
			flags:   []string{"--allow-duplicates"},
			wantOut: "already stored io.flotilla.object.applied.v1 ci-1 on " + paintSubject,
		},
		{
			name:    "the same event re-indented is accepted with --allow-duplicates",
			second:  strings.ReplaceAll(strings.ReplaceAll(red, ",", ", "), ":", ": "),
			flags:   []string{"--allow-duplicates"},
			wantOut: "already stored",
		},
		{
			name:    "different data under the same id is refused with --allow-duplicates",
			second:  strings.Replace(publishedEvent, "REPLACE", "blue", 1),
			flags:   []string{"--allow-duplicates"},
			wantErr: `event 1 (id "ci-1"): duplicate id with different content, not stored`,
		},
		{
			name:    "a different type under the same id is refused with --allow-duplicates",
			second:  strings.Replace(red, "object.applied", "object.deleted", 1),
			flags:   []string{"--allow-duplicates"},
			wantErr: "duplicate id with different content, not stored",
		},
		{
			name:    "the same event on another subject is refused with --allow-duplicates",
			second:  red,
			flags:   []string{"--allow-duplicates", "--subject", "flotilla.input.shop.core.ConfigMap.other"},
			wantErr: "duplicate id with different content, not stored",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			url, bus := eventstest.Server(t)
			if out, errOut, err := runCLI(t, url, "publish", "-f", writeEvent(t, red)); err != nil {
				t.Fatalf("first publish: %v\n%s%s", err, out, errOut)
			}
			out, _, err := runCLI(t, url, append([]string{"publish", "-f", writeEvent(t, c.second)}, c.flags...)...)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("second publish: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("second publish: want an error containing %q, got %v (stdout %q)", c.wantErr, err, out)
			case !strings.Contains(out, c.wantOut):
				t.Fatalf("second publish: want stdout containing %q, got %q", c.wantOut, out)
			}
			if diff := cmp.Diff(map[string][]string{paintSubject: {"red"}}, storedInputs(t, bus)); diff != "" {
				t.Errorf("stored inputs (-want +got):\n%s", diff)
			}
		})
	}
}

// An array is decoded and validated whole before anything is sent: one bad
// element, or two elements under one id, and nothing is published.
func TestPublishOfAnArraySendsNothingWhenAnyElementIsRefused(t *testing.T) {
	colour := func(c, id string) string {
		return strings.Replace(strings.Replace(publishedEvent, "REPLACE", c, 1), `"ci-1"`, `"`+id+`"`, 1)
	}
	for _, c := range []struct {
		name     string
		elements []string
		flags    []string
		wantErr  string
		want     map[string][]string
	}{
		{
			name:     "an element that is not a CloudEvent",
			elements: []string{colour("red", "a"), `{"specversion":"1.0","type":"x","id":"b"}`, colour("blue", "c")},
			wantErr:  `event 2 (id "b"): source: REQUIRED`,
			want:     map[string][]string{},
		},
		{
			name:     "an element that is not a JSON object",
			elements: []string{colour("red", "a"), `"hello"`},
			wantErr:  "event 2: not a CloudEvent",
			want:     map[string][]string{},
		},
		{
			name:     "two elements with one id and different content",
			elements: []string{colour("red", "a"), colour("blue", "a")},
			flags:    []string{"--allow-duplicates"},
			wantErr:  `event 2 (id "a"): duplicate id of event 1`,
			want:     map[string][]string{},
		},
		{
			name:     "two identical elements without --allow-duplicates",
			elements: []string{colour("red", "a"), colour("red", "a")},
			wantErr:  `event 2 (id "a"): duplicate id of event 1`,
			want:     map[string][]string{},
		},
		{
			name:     "two identical elements with --allow-duplicates are stored once",
			elements: []string{colour("red", "a"), colour("red", "a"), colour("blue", "b")},
			flags:    []string{"--allow-duplicates"},
			want:     map[string][]string{paintSubject: {"red", "blue"}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			url, bus := eventstest.Server(t)
			file := writeEvent(t, "[\n"+strings.Join(c.elements, ",\n")+"\n]")
			out, errOut, err := runCLI(t, url, append([]string{"publish", "-f", file}, c.flags...)...)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("publish: want error %q, got %v\n%s%s", c.wantErr, err, out, errOut)
			}
			if diff := cmp.Diff(c.want, storedInputs(t, bus)); diff != "" {
				t.Errorf("stored inputs (-want +got):\n%s", diff)
			}
		})
	}
}

// A batch partly stored before (a retry after a lost connection) is
// published again with --allow-duplicates: the stored events count as
// published, the rest are stored, and the exit is zero.
func TestPublishRetryOfAPartlyStoredArrayStoresTheRestWithAllowDuplicates(t *testing.T) {
	url, bus := eventstest.Server(t)
	red := strings.Replace(publishedEvent, "REPLACE", "red", 1)
	blue := strings.Replace(strings.Replace(publishedEvent, "REPLACE", "blue", 1), `"ci-1"`, `"ci-2"`, 1)
	if _, _, err := runCLI(t, url, "publish", "-f", writeEvent(t, red)); err != nil {
		t.Fatal(err)
	}
	batch := writeEvent(t, "["+red+","+blue+"]")
	out, _, err := runCLI(t, url, "publish", "-f", batch)
	if err == nil || !strings.Contains(err.Error(), "duplicate id, not stored") || !strings.Contains(out, "published io.flotilla.object.applied.v1 ci-2") {
		t.Fatalf("publish without --allow-duplicates: want ci-1 refused and ci-2 published, got %v, stdout %q", err, out)
	}
	out, _, err = runCLI(t, url, "publish", "-f", batch, "--allow-duplicates")
	if err != nil || strings.Count(out, "already stored") != 2 {
		t.Fatalf("publish with --allow-duplicates: %v, stdout %q", err, out)
	}
	if diff := cmp.Diff(map[string][]string{paintSubject: {"red", "blue"}}, storedInputs(t, bus)); diff != "" {
		t.Errorf("stored inputs (-want +got):\n%s", diff)
	}
}

// publish refuses, before sending anything, every element policyd is
// certain to dead-letter, and reports each problem with the element's
// number and the field; an empty array is an error too.
func TestPublishRefusesEventsPolicydWouldDeadLetterNamingElementAndField(t *testing.T) {
	url, bus := eventstest.Server(t)
	good := strings.Replace(publishedEvent, "REPLACE", "red", 1)
	event := func(id, extra string) string {
		return `{"specversion":"1.0","source":"/ci","id":"` + id + `",` + extra + `}`
	}
	deployment := `"data":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},` +
		`"spec":{"replcas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`
	for _, c := range []struct {
		name     string
		elements []string // published as an array; one element alone
		// wantErr is the error, FILE standing for the file's name.
		wantErr string
	}{
		{"a specversion other than 1.0",
			[]string{good, strings.Replace(good, `"1.0"`, `"0.3"`, 1)},
			`FILE: event 2: specversion: unsupported value "0.3": must be "1.0" (Flotilla's events are CloudEvents 1.0)`},
		{"a type the catalogue does not have",
			[]string{event("a", `"type":"io.flotilla.object.aplied.v1","data":{}`)},
			`FILE: event 1 (id "a"): type: unknown event type "io.flotilla.object.aplied.v1": not in Flotilla's event catalogue ` +
				`(inputs: io.flotilla.object.applied.v1, io.flotilla.object.deleted.v1, io.flotilla.secret.sealed.v1, io.flotilla.reschedule.requested.v1)`},
		{"a catalogued type that is no input, on an input subject",
			[]string{event("a", `"type":"io.flotilla.placement.decided.v1","data":{}`)},
			`FILE: event 1 (id "a"): type: io.flotilla.placement.decided.v1 is not an input: policyd takes only ` +
				`io.flotilla.object.applied.v1, io.flotilla.object.deleted.v1, io.flotilla.secret.sealed.v1, io.flotilla.reschedule.requested.v1 on flotilla.input.> (--subject sends it elsewhere)`},
		{"applied data that is not an object",
			[]string{event("a", `"type":"io.flotilla.object.applied.v1","data":"hello"`)},
			`FILE: event 1 (id "a"): data: must be a Kubernetes object (a JSON object), got a string`},
		{"an applied object policyd's validator refuses",
			[]string{event("a", `"type":"io.flotilla.object.applied.v1",`+deployment)},
			`FILE: event 1 (id "a"): data.spec.replcas: unknown field "replcas" (did you mean "replicas"?)`},
		{"a deletion naming no object",
			[]string{event("a", `"type":"io.flotilla.object.deleted.v1","data":{"kind":"ConfigMap"}`)},
			`FILE: event 1 (id "a"): data: must name the object: apiVersion, kind and metadata.name`},
		{"data that is not JSON, without the decoder's internals",
			[]string{event("a", `"type":"io.flotilla.object.applied.v1","datacontenttype":"text/plain","data":{"a":1}`)},
			`FILE: event 1: datacontenttype: unsupported value "text/plain": Flotilla's events carry JSON data (application/json)`},
		{"a missing id, every element's problem reported",
			[]string{`{"specversion":"1.0","source":"/ci","type":"io.flotilla.object.applied.v1","data":{}}`, event("b", `"type":"nope"`)},
			"FILE: event 1: id: MUST be a non-empty string\n" + `FILE: event 2 (id "b"): type: unknown event type "nope": not in Flotilla's event catalogue ` +
				`(inputs: io.flotilla.object.applied.v1, io.flotilla.object.deleted.v1, io.flotilla.secret.sealed.v1, io.flotilla.reschedule.requested.v1)`},
		{"an empty array", nil, "FILE: no events: the array is empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := "[" + strings.Join(c.elements, ",\n") + "]"
			file := writeEvent(t, doc)
			_, _, err := runCLI(t, url, "publish", "-f", file)
			got := "<nil>"
			if err != nil {
				got = strings.ReplaceAll(err.Error(), file, "FILE")
			}
			if diff := cmp.Diff(c.wantErr+"\n(nothing was published)", got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string][]string{}, storedInputs(t, bus)); diff != "" {
				t.Errorf("stored inputs (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("--validate=false sends what policyd will refuse, to see it dead-lettered", func(t *testing.T) {
		typo := strings.Replace(good, `"data":{"colour"`, `"dta":{"colour"`, 1)
		if _, _, err := runCLI(t, url, "publish", "-f", writeEvent(t, typo)); err == nil || !strings.Contains(err.Error(), `data.dta: unknown field "dta"`) {
			t.Fatalf("publish of a ConfigMap with a typo: want it refused, got %v", err)
		}
		out, _, err := runCLI(t, url, "publish", "-f", writeEvent(t, typo), "--validate=false")
		if err != nil || !strings.Contains(out, "published io.flotilla.object.applied.v1 ci-1") {
			t.Fatalf("publish --validate=false: %v, stdout %q", err, out)
		}
	})
}
