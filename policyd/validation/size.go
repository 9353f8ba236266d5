package validation

import (
	"github.com/flotilla-io/flotilla/internal/strictyaml"
	"strings"

	kvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/flotilla/events"
)

// MaxDataBytes is the API server's limit on the data of one ConfigMap
// (data and binaryData) or Secret (data and stringData): 1 MiB.
const MaxDataBytes = 1 << 20

// MaxObjectBytes is the largest object, encoded as JSON, that Flotilla
// accepts: one NATS message (events.MaxPayload) less 1 MiB, since every
// object travels whole in one event, and a template also inside its
// binding and its placement, which add the policy's spec and a score per
// cluster. At the whole message, a template was accepted whose binding
// could not be published.
const MaxObjectBytes = events.MaxPayload - 1<<20

// checkSize refuses a ConfigMap or Secret whose data exceeds what the API
// server stores (and checks their keys as it does), and any object too
// large for one message on the bus.
func checkSize(obj map[string]any, apiVersion, kind string, rep *report) {
	if apiVersion == "v1" {
		switch kind {
		case "ConfigMap":
			checkDataSize(obj, "binaryData", "", rep)
		case "Secret":
			checkDataSize(obj, "data", "stringData", rep)
		}
	}
	if jsonSizeBound(obj, MaxObjectBytes) <= MaxObjectBytes {
		return
	}
	raw, err := events.MarshalJSON(obj)
	if err == nil && len(raw) > MaxObjectBytes {
		rep.errorf("", "too long: the object is %d bytes as JSON, more than %d (the NATS payload limit, max_payload, less 1 MiB for the binding and placement that carry it)", len(raw), MaxObjectBytes)
	}
}

// checkDataSize checks the keys of an object's data maps and the sum of
// their values' sizes. base64 names the map whose values are base64
// (their decoded size counts); override names a map whose keys replace
// base64's on the server (a Secret's stringData), "" for none. For a
// ConfigMap, data holds strings and binaryData base64; for a Secret, data
// holds base64 and stringData strings.
func checkDataSize(obj map[string]any, base64, override string, rep *report) {
	plain := "data"
	if override != "" {
		plain = override
	}
	plainMap, _ := obj[plain].(map[string]any)
	encMap, _ := obj[base64].(map[string]any)
	total := 0
	for _, k := range sortedKeys(plainMap) {
		checkDataKey(plain, k, rep)
		total += len(str(plainMap[k]))
	}
	for _, k := range sortedKeys(encMap) {
		checkDataKey(base64, k, rep)
		if _, dup := plainMap[k]; dup {
			if override == "" {
				rep.errorf(base64+"["+k+"]", "invalid value %q: duplicate of a key in %s", k, plain)
			}
			continue // a Secret's stringData wins over its data
		}
		total += decodedLen(str(encMap[k]))
	}
	if total > MaxDataBytes {
		rep.errorf("data", "too long: must have at most %d bytes, has %d", MaxDataBytes, total)
	}
}

func checkDataKey(p, k string, rep *report) {
	for _, msg := range kvalidation.IsConfigMapKey(k) {
		rep.errorf(p+"["+k+"]", "invalid key %q: %s", strictyaml.Truncate(k), msg)
	}
}

// decodedLen is the length of standard base64 s once decoded (the
// structural pass has checked that it decodes).
func decodedLen(s string) int {
	n := len(s) / 4 * 3
	return n - (len(s) - len(strings.TrimRight(s, "=")))
}

// jsonSizeBound returns a bound at least as large as x's JSON encoding,
// without encoding it; it stops counting once past limit. Strings count
// six bytes per byte (the longest escape), numbers 32.
func jsonSizeBound(x any, limit int) int {
	switch v := x.(type) {
	case string:
		return 2 + 6*len(v)
	case map[string]any:
		n := 2
		for k, e := range v {
			n += 2 + 6*len(k) + 2 + jsonSizeBound(e, limit-n)
			if n > limit {
				return n
			}
		}
		return n
	case []any:
		n := 2
		for _, e := range v {
			n += 1 + jsonSizeBound(e, limit-n)
			if n > limit {
				return n
			}
		}
		return n
	}
	return 32
}
