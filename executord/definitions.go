package executord

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/events"
)

// A CustomResourceDefinition's copy leaves a member only after the copies
// of the custom resources it defines that Flotilla put there: the member
// deletes every object of a kind whose CRD is deleted. Removed first, as an
// unjoin's failover removed it (a CRD has no health rule, so it is purged
// as soon as it is evicted), it took with it a custom resource whose copy
// Flotilla kept because it fits nowhere else, while `get work` still said
// "copy kept". Its removal now waits, shown as Deleting with the resources
// it waits for, and is carried out when the last of them has left
// (removeAwaitedDefinitions). A cluster that leaves Flotilla with the
// custom resources left in it (releaseOnLeaving) leaves the waiting CRD
// there too. A CRD template deleted with its kind's
// templates (policyd deletes those with it) leaves the same way, after them.

const (
	definitionGroup = "apiextensions.k8s.io"
	definitionKind  = "CustomResourceDefinition"
)

// isDefinition: key is a CustomResourceDefinition.
func isDefinition(key events.ObjectKey) bool {
	return key.Group == definitionGroup && key.Kind == definitionKind
}

// crdResource is where a member serves its CustomResourceDefinitions.
var crdResource = schema.GroupVersionResource{Group: definitionGroup, Version: "v1", Resource: "customresourcedefinitions"}

// definedKind is the group and kind a CRD defines (kind "": any kind of
// the group, when nothing says which).
type definedKind struct{ group, kind string }

// defines: key is of the kind d defines (a custom resource, not a CRD).
func (d definedKind) defines(key events.ObjectKey) bool {
	return key.Group == d.group && (d.kind == "" || key.Kind == d.kind) && !isDefinition(key)
}

// definedBy is the group and kind the CRD key defines: from the template
// of its latest placement; once that is gone (its template deleted), from
// the CRD in the member; else the group from its name (plural.group, as
// the API server requires) and any kind. Callers hold w.mu.
func (w *worker) definedBy(ctx context.Context, key events.ObjectKey) definedKind {
	var crd struct {
		Spec struct {
			Group string `json:"group"`
			Names struct {
				Kind string `json:"kind"`
			} `json:"names"`
		} `json:"spec"`
	}
	if p, ok := w.placed[key]; ok && p.Binding != nil && json.Unmarshal(p.Binding.Template, &crd) == nil && crd.Spec.Group != "" {
		return definedKind{crd.Spec.Group, crd.Spec.Names.Kind}
	}
	if d, ok := w.awaiting[key]; ok && d.kind != "" {
		return d
	}
	if u, err := w.dyn.Resource(crdResource).Get(ctx, key.Name, metav1.GetOptions{}); err == nil {
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		if group != "" {
			return definedKind{group, kind}
		}
	}
	_, group, _ := strings.Cut(key.Name, ".")
	return definedKind{group: group}
}

// resourcesOf lists, sorted, the templates of kind d whose copies are in
// this cluster (their work status is not Deleted).
func (w *worker) resourcesOf(d definedKind) []string {
	var out []string
	for k, st := range w.work {
		if d.defines(k) && st.Phase != events.WorkDeleted {
			out = append(out, k.String())
		}
	}
	slices.Sort(out)
	return out
}

// awaitResources holds the removal of the CRD key while copies of its
// custom resources are in this cluster (waits: true), records it among
// w.awaiting, and says so in its work status: Deleting, naming them.
// Callers hold w.mu.
func (w *worker) awaitResources(ctx context.Context, cause events.Event, key events.ObjectKey, gen, rev int64) (waits bool, err error) {
	if !isDefinition(key) {
		return false, nil
	}
	d := w.definedBy(ctx, key)
	resources := w.resourcesOf(d)
	if len(resources) == 0 {
		delete(w.awaiting, key)
		return false, nil
	}
	w.awaiting[key] = d
	last := w.work[key]
	st := last
	if gen != 0 || rev != 0 {
		st.Generation, st.BindingRevision = gen, rev
	}
	st.Phase = events.WorkDeleting
	st.Message = fmt.Sprintf("removal waits until the %d custom resource(s) of its kind here leave %s (deleting the CRD deletes them): %s",
		len(resources), w.name, strings.Join(resources, ", "))
	if last.Message != st.Message {
		w.log.Info("CRD removal waits for its custom resources", zap.String("workload", key.String()), zap.Strings("resources", resources))
	}
	return true, w.publish(ctx, cause, st)
}

// removeAwaitedDefinitions carries out, once gone's copy has left, the
// removals of the CRDs that waited for it (w.awaiting) and wait for
// nothing more: each converges again to what its latest placement asks
// for. A CRD placed back meanwhile (no longer Deleting) waits no more.
// Only CRDs whose removal this worker found waiting are considered: after
// a restart the catch-up over every CRD's own latest placement decides
// again (a custom resource removed first must not remove a CRD whose
// placement is not read yet). Callers hold w.mu.
func (w *worker) removeAwaitedDefinitions(ctx context.Context, cause events.Event, gone events.ObjectKey) error {
	if len(w.awaiting) == 0 || isDefinition(gone) {
		return nil
	}
	for _, k := range slices.SortedFunc(maps.Keys(w.awaiting), func(a, b events.ObjectKey) int { return strings.Compare(a.Name, b.Name) }) {
		d := w.awaiting[k]
		if !d.defines(gone) {
			continue
		}
		st := w.work[k]
		if st.Phase != events.WorkDeleting {
			delete(w.awaiting, k) // placed back, or removed
			continue
		}
		if len(w.resourcesOf(d)) > 0 {
			continue
		}
		delete(w.awaiting, k)
		f, err := w.converge(ctx, cause, k, st.Generation, st.BindingRevision)
		if err := w.settle(ctx, cause, k, f, st.Generation, st.BindingRevision, err); err != nil {
			return err
		}
	}
	return nil
}
