package hubd

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/hubd/mirror"
)

// writeLog is what hubd last wrote to each hub object, by key, times left
// out, so a round that changes nothing writes nothing. It forgets a key
// whose object is gone from the hub or was made anew there (another UID),
// and every key a round did not touch (sweep), so what the hub lost (a
// ResourceBinding deleted with kubectl, a Cluster deleted and applied
// again) is written again in the next round.
type writeLog struct {
	last map[string]string // key -> what was written, times left out
	uid  map[string]string // key -> UID of the hub object written ("" until seen)
	// conditions are the conditions last written per hub object; only
	// a condition whose status changes gets a new transition time.
	conditions map[string][]metav1.Condition
	touched    map[string]bool // keys this round looked at
}

func newWriteLog() *writeLog {
	return &writeLog{last: map[string]string{}, uid: map[string]string{}, conditions: map[string][]metav1.Condition{}, touched: map[string]bool{}}
}

// keepTransitions keeps the transition times of the conditions last
// written under key (mirror.KeepTransitions) and remembers these.
func (l *writeLog) keepTransitions(key string, next []metav1.Condition) []metav1.Condition {
	l.touched["conditions/"+key] = true
	out := mirror.KeepTransitions(l.conditions[key], next)
	l.conditions[key] = out
	return out
}

// changed reports whether want differs from what was written under key to
// the hub object whose UID is uid ("" when the hub has no such object, so
// it must be written), and records want as written.
func (l *writeLog) changed(key, uid string, want any) bool {
	l.touched[key] = true
	if prev, ok := l.uid[key]; uid == "" || (ok && prev != "" && prev != uid) {
		delete(l.last, key)
	}
	l.uid[key] = uid
	b, _ := json.Marshal(want)
	s := string(b)
	for _, f := range []string{"lastTransitionTime", "resourceVersion"} {
		s = stripField(s, f)
	}
	if l.last[key] == s {
		return false
	}
	l.last[key] = s
	return true
}

// done reports whether something was written under key, and touches it.
func (l *writeLog) done(key string) bool {
	l.touched[key] = true
	return l.last[key] != ""
}

// record notes that something was written under key.
func (l *writeLog) record(key string) {
	l.touched[key] = true
	l.last[key] = "1"
}

// forget drops key: the next round writes it again.
func (l *writeLog) forget(key string) {
	delete(l.last, key)
	delete(l.uid, key)
}

// sweep forgets every key this round did not touch (objects gone from
// the hub or from the bus) and starts the next round.
func (l *writeLog) sweep() {
	for k := range l.last {
		if !l.touched[k] {
			l.forget(k)
		}
	}
	for k := range l.conditions {
		if !l.touched["conditions/"+k] {
			delete(l.conditions, k)
		}
	}
	clear(l.touched)
}

// stripField blanks every "field":"value" of a JSON text.
func stripField(s, field string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, `"`+field+`":"`)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+len(field)+4:]
		j := strings.Index(rest, `"`)
		if j < 0 {
			return b.String()
		}
		s = rest[j+1:]
	}
}
