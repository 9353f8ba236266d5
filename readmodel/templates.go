package readmodel

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flotilla-io/flotilla/events"
)

// TemplateRow is one resource template as `flotilla get templates` and
// `flotilla get KIND` list it.
type TemplateRow struct {
	// ObjectRecord without its object (`get KIND/NAME -o yaml` and replay
	// show the object).
	events.ObjectRecord
	// Policy claims the template (nil: none); BindingRevision counts its
	// binding's changes.
	Policy          *events.PolicyRef `json:"policy"`
	BindingRevision int64             `json:"bindingRevision,omitempty"`
}

// Templates lists the accepted templates what names, in key order: every
// one for "templates" (or "template"), else those of the kind what names
// (MatchesKind). matched says whether any template, in any namespace, is
// of that kind, and clusterScoped whether the last one matched is
// cluster-scoped: a caller that filters by namespace tells "no such kind"
// from "none here" with them.
func Templates(p Published, what string) (rows []TemplateRow, matched, clusterScoped bool) {
	all := strings.EqualFold(what, "templates") || strings.EqualFold(what, "template")
	for _, r := range p.SortedRecords() {
		if r.Role != events.RoleTemplate || (!all && !MatchesKind(what, r.Key)) {
			continue
		}
		matched, clusterScoped = true, r.Key.Namespace == ""
		row := TemplateRow{ObjectRecord: r}
		row.Policy, row.BindingRevision = p.ClaimingPolicy(r.Key)
		row.Object = nil
		rows = append(rows, row)
	}
	return rows, matched, clusterScoped
}

// Policies lists the accepted propagation and override policies, in key
// order.
func Policies(p Published) []events.ObjectRecord {
	var out []events.ObjectRecord
	for _, r := range p.SortedRecords() {
		if r.Role == events.RolePolicy || r.Role == events.RoleOverride {
			out = append(out, r)
		}
	}
	return out
}

// ResolveObject returns the accepted object ref (KIND/NAME) names in
// namespace: what `flotilla delete KIND/NAME` deletes. No such object is
// an error that says so.
func ResolveObject(p Published, ref, namespace string) (events.ObjectRecord, error) {
	if _, _, err := SplitRef(ref); err != nil {
		return events.ObjectRecord{}, err
	}
	r, err := Resolve(ref, namespace, p.SortedRecords(), func(r events.ObjectRecord) events.ObjectKey { return r.Key }, "objects")
	if errors.Is(err, ErrNotFound) {
		return events.ObjectRecord{}, fmt.Errorf("%s not found in namespace %s", ref, namespace)
	}
	return r, err
}
