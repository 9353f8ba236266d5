package eventstest

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// CheckDocTable fails t unless the Consumes / Produces table in the
// package doc of docFile (a daemon's doc.go) is what the daemon does:
//
//   - Consumes lists exactly the event types its consumers bind, each
//     with the stream and consumer name of the consumer that binds it. A
//     consumer binds the catalogue types whose subjects its filter
//     subjects match on its stream.
//   - Produces lists exactly produces, each with its catalogue stream, and
//     the catalogue names daemon as the producer of each.
//
// The table's lines group event types (io.flotilla.a.b|c.v1 stands for
// io.flotilla.a.b.v1 and io.flotilla.a.c.v1) and close each group with a
// parenthesis naming the stream and, for Consumes, "consumer NAME".
// placeholders maps a text in the specs' names to what the doc writes for
// it (a cluster's name to "<cluster>").
func CheckDocTable(t testing.TB, docFile, daemon string, consumers []natsbus.ConsumerSpec, produces []events.Type, placeholders map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	consumes, produced := parseDocTable(string(raw))
	var wantConsumes []string
	for _, c := range consumers {
		name := c.Name
		for from, to := range placeholders {
			name = strings.ReplaceAll(name, from, to)
		}
		for _, e := range events.Catalogue {
			if e.Stream == c.Stream && slices.ContainsFunc(c.Subjects, func(f string) bool { return subjectMatches(f, e.Subject) }) {
				wantConsumes = append(wantConsumes, row(string(e.Type), e.Stream, name))
			}
		}
	}
	var wantProduces []string
	for _, typ := range produces {
		e, ok := events.Lookup(typ)
		if !ok {
			t.Errorf("%s publishes %s, which is not in the catalogue", daemon, typ)
			continue
		}
		if !strings.Contains(e.Producer, daemon) {
			t.Errorf("%s publishes %s, whose catalogue producer is %q", daemon, typ, e.Producer)
		}
		wantProduces = append(wantProduces, row(string(typ), e.Stream, ""))
	}
	for _, c := range []struct {
		what      string
		want, got []string
	}{{"Consumes", wantConsumes, consumes}, {"Produces", wantProduces, produced}} {
		slices.Sort(c.want)
		slices.Sort(c.got)
		c.want, c.got = slices.Compact(c.want), slices.Compact(c.got)
		for _, w := range c.want {
			if !slices.Contains(c.got, w) {
				t.Errorf("%s: %s does not list %s", docFile, c.what, w)
			}
		}
		for _, g := range c.got {
			if !slices.Contains(c.want, g) {
				t.Errorf("%s: %s lists %s, which %s does not do", docFile, c.what, g, daemon)
			}
		}
	}
}

func row(typ, stream, consumer string) string {
	if consumer == "" {
		return typ + " on " + stream
	}
	return typ + " on " + stream + " by consumer " + consumer
}

var (
	tableType     = regexp.MustCompile(`io\.flotilla\.[a-z|.]+\.v[0-9]+`)
	tableGroupEnd = regexp.MustCompile(`\(([^()]*FLOTILLA_[A-Z]+[^()]*)\)`)
	tableStream   = regexp.MustCompile(`FLOTILLA_[A-Z]+`)
	tableConsumer = regexp.MustCompile(`consumer (\S+)`)
)

// parseDocTable returns the rows of the Consumes and Produces sections.
func parseDocTable(doc string) (consumes, produces []string) {
	var section *[]string
	var pending []string
	for _, line := range strings.Split(doc, "\n") {
		text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "//"))
		switch {
		case strings.HasPrefix(text, "Consumes"):
			section, pending = &consumes, nil
		case strings.HasPrefix(text, "Produces"):
			section, pending = &produces, nil
		case strings.HasPrefix(text, "State"), !strings.HasPrefix(line, "//\t") && section != nil:
			section = nil
		}
		if section == nil {
			continue
		}
		// Types and group ends in the order they come on the line.
		for len(text) > 0 {
			ti := tableType.FindStringIndex(text)
			gi := tableGroupEnd.FindStringSubmatchIndex(text)
			switch {
			case ti != nil && (gi == nil || ti[0] < gi[0]):
				pending = append(pending, expand(text[ti[0]:ti[1]])...)
				text = text[ti[1]:]
			case gi != nil:
				inside := text[gi[2]:gi[3]]
				consumer := ""
				if m := tableConsumer.FindStringSubmatch(inside); m != nil {
					consumer = strings.TrimRight(m[1], ",;")
				}
				for _, typ := range pending {
					*section = append(*section, row(typ, tableStream.FindString(inside), consumer))
				}
				pending, text = nil, text[gi[1]:]
			default:
				text = ""
			}
		}
	}
	return consumes, produces
}

// expand spells out a|b alternatives in one segment of a type.
func expand(typ string) []string {
	parts := strings.Split(typ, ".")
	for i, p := range parts {
		if strings.Contains(p, "|") {
			var out []string
			for _, alt := range strings.Split(p, "|") {
				parts[i] = alt
				out = append(out, strings.Join(parts, "."))
			}
			return out
		}
	}
	return []string{typ}
}

// subjectMatches reports whether a consumer's filter subject matches a
// catalogue subject pattern, whose <key> stands for four tokens and any
// other <...> for one; a filter naming a token literally (a kind, say)
// matches the placeholder there.
func subjectMatches(filter, pattern string) bool {
	pattern = strings.ReplaceAll(pattern, "<key>", "<ns>.<group>.<Kind>.<name>")
	pt := strings.Split(pattern, ".")
	for i, f := range strings.Split(filter, ".") {
		switch {
		case f == ">":
			return i < len(pt)
		case i >= len(pt):
			return false
		case f != "*" && f != pt[i] && !strings.HasPrefix(pt[i], "<"):
			return false
		}
	}
	return len(strings.Split(filter, ".")) == len(pt)
}
