package policyd

import (
	"fmt"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// replicaLimit returns the problem of a template that asks for more
// replicas than max allows (none when max is 0, the kind has no replica
// field or the count is within the limit). obj is the validated object.
func replicaLimit(apiVersion, kind string, obj map[string]any, max int32) []events.FieldError {
	field := policy.ReplicaField(apiVersion, kind)
	if max <= 0 || field == "" {
		return nil
	}
	spec, _ := obj["spec"].(map[string]any)
	var n int64
	switch v := spec[field].(type) {
	case int64:
		n = v
	case float64:
		n = int64(v)
	case int:
		n = int64(v)
	default:
		return nil
	}
	if n <= int64(max) {
		return nil
	}
	return []events.FieldError{{Field: "spec." + field, Reason: fmt.Sprintf(
		"invalid value %d: more than the %d replicas this policyd accepts (--max-replicas); lower it, or run policyd with a higher limit", n, max)}}
}
