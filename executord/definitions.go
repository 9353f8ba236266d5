package executord

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

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
// (removeAwaitedDefinitions). A CRD template deleted with its kind's
// templates (policyd deletes those with it) leaves the same way, after them.

const (
	definitionGroup = "apiextensions.k8s.io"
	definitionKind  = "CustomResourceDefinition"
)

// isDefinition: key is a CustomResourceDefinition.
func isDefinition(key events.ObjectKey) bool {
	return key.Group == definitionGroup && key.Kind == definitionKind
}

// definedBy is the group and kind the CRD key defines: from the template
// of its latest placement; once that is gone, the group from its name
// (plural.group, as the API server requires) and kind "" (any kind of the
// group).
func (w *worker) definedBy(key events.ObjectKey) (group, kind string) {
	if p, ok := w.placed[key]; ok && p.Binding != nil {
		var crd struct {
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
			} `json:"spec"`
		}
		if json.Unmarshal(p.Binding.Template, &crd) == nil && crd.Spec.Group != "" {
			return crd.Spec.Group, crd.Spec.Names.Kind
		}
	}
	_, group, _ = strings.Cut(key.Name, ".")
	return group, ""
}

// resourcesOf lists, sorted, the templates of the kind the CRD key defines
// whose copies are in this cluster (their work status is not Deleted).
func (w *worker) resourcesOf(key events.ObjectKey) []string {
	group, kind := w.definedBy(key)
	var out []string
	for k, st := range w.work {
		if k.Group == group && (kind == "" || k.Kind == kind) && !isDefinition(k) && st.Phase != events.WorkDeleted {
			out = append(out, k.String())
		}
	}
	slices.Sort(out)
	return out
}

// awaitResources holds the removal of the CRD key while copies of its
// custom resources are in this cluster (waits: true), and says so in its
// work status: Deleting, naming them. Callers hold w.mu.
func (w *worker) awaitResources(ctx context.Context, cause events.Event, key events.ObjectKey, gen, rev int64) (waits bool, err error) {
	if !isDefinition(key) {
		return false, nil
	}
	resources := w.resourcesOf(key)
	if len(resources) == 0 {
		return false, nil
	}
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
// removals of the CRDs that waited for it (awaitResources): each converges
// again to what its latest placement asks for. Callers hold w.mu.
func (w *worker) removeAwaitedDefinitions(ctx context.Context, cause events.Event, gone events.ObjectKey) error {
	if isDefinition(gone) {
		return nil
	}
	for _, st := range events.SortedByKey(w.work) {
		if !isDefinition(st.Key) || st.Phase != events.WorkDeleting || len(w.resourcesOf(st.Key)) > 0 {
			continue
		}
		if group, kind := w.definedBy(st.Key); gone.Group != group || (kind != "" && gone.Kind != kind) {
			continue
		}
		f, err := w.converge(ctx, cause, st.Key, st.Generation, st.BindingRevision)
		if err := w.settle(ctx, cause, st.Key, f, st.Generation, st.BindingRevision, err); err != nil {
			return err
		}
	}
	return nil
}
