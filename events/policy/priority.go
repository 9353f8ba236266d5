package policy

import "fmt"

// The Kubernetes PriorityClass a policy's schedulePriority names
// (reference features §2.2).
const (
	PriorityClassAPIVersion = "scheduling.k8s.io/v1"
	KindPriorityClass       = "PriorityClass"
	// PriorityClassSourceKube is the only priorityClassSource Karmada
	// v1.19 implements.
	PriorityClassSourceKube = "KubePriorityClass"
)

// PriorityClassValue reads the value of a scheduling.k8s.io/v1
// PriorityClass object; ok is false for any other object.
func PriorityClassValue(apiVersion, kind string, obj map[string]any) (value int32, ok bool) {
	if apiVersion != PriorityClassAPIVersion || kind != KindPriorityClass {
		return 0, false
	}
	switch v := obj["value"].(type) {
	case int64:
		return int32(v), true
	case float64:
		return int32(v), true
	case int:
		return int32(v), true
	}
	return 0, true
}

// SchedulePriorityOf is a template's schedule priority under its policy's
// schedulePriority (reference features §2.2): 0 without one, else the
// value of the named PriorityClass, which classes looks up. A class that
// does not exist (or a source other than KubePriorityClass) gives an
// error: Karmada then creates no binding, Flotilla leaves the template
// unscheduled with that reason. ClusterResourceBindings (cluster-scoped
// templates) never get a priority.
func SchedulePriorityOf(sp *SchedulePriority, namespaced bool, classes func(name string) (int32, bool)) (int32, error) {
	if sp == nil || !namespaced {
		return 0, nil
	}
	if sp.PriorityClassSource != PriorityClassSourceKube {
		return 0, fmt.Errorf("priorityClassSource %q is not supported yet", sp.PriorityClassSource)
	}
	if classes != nil {
		if v, ok := classes(sp.PriorityClassName); ok {
			return v, nil
		}
	}
	return 0, fmt.Errorf("PriorityClass %q named by spec.schedulePriority.priorityClassName does not exist", sp.PriorityClassName)
}
