package validation

import (
	"bytes"

	"github.com/flotilla-io/flotilla/events"
)

// immutableFields are the fields of a built-in kind the API server
// refuses to change once the object exists: an update that changes one
// is refused by every member (Failed everywhere, the old generation left
// running), as Karmada's own API server refuses it at apply.
func immutableFields(apiVersion, kind string) []string {
	switch {
	case apiVersion == "apps/v1" && (kind == "Deployment" || kind == "ReplicaSet" || kind == "DaemonSet"):
		return []string{"spec.selector"}
	case apiVersion == "apps/v1" && kind == "StatefulSet":
		return []string{"spec.selector", "spec.serviceName", "spec.podManagementPolicy", "spec.volumeClaimTemplates"}
	case apiVersion == "batch/v1" && kind == "Job":
		return []string{"spec.selector", "spec.template", "spec.completionMode"}
	}
	return nil
}

// HasImmutableFields reports whether the kind has fields ImmutableChanges
// checks (the others need no look at the accepted object).
func HasImmutableFields(apiVersion, kind string) bool {
	return immutableFields(apiVersion, kind) != nil
}

// ImmutableChanges returns a problem for every field of old, the accepted
// object, that updated changes although the API server forbids it; nil
// when the kind has none or none changed. Values compare as JSON, so that
// a number read back from the bus equals the one just validated.
func ImmutableChanges(apiVersion, kind string, old, updated map[string]any) []Problem {
	var out []Problem
	for _, f := range immutableFields(apiVersion, kind) {
		a, _ := events.MarshalJSON(at(old, f))
		b, _ := events.MarshalJSON(at(updated, f))
		if !bytes.Equal(a, b) {
			out = append(out, Problem{Field: f, Reason: "field is immutable: the member API servers refuse to change it on the " + kind + " they run; delete the " + kind + " and apply it again to change it"})
		}
	}
	return out
}
