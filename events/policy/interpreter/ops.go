package interpreter

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	lua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events/policy"
)

// The operations of reference features §7.1: each runs one script's
// global function with Karmada's arguments and checks its return shape.
// Every failure is an *Error naming the operation; nothing falls back to
// another interpreter.

// Error is a script's failure in one operation.
type Error struct {
	Operation string
	Err       error
}

func (e *Error) Error() string { return e.Operation + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

func fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	return &Error{Operation: op, Err: err}
}

// StatusItem is one member's status as AggregateStatus sees it (Karmada's
// AggregatedStatusItem): one per live Work, sorted by ClusterName.
type StatusItem struct {
	ClusterName    string         `json:"clusterName"`
	Status         map[string]any `json:"status,omitempty"`
	Applied        bool           `json:"applied,omitempty"`
	AppliedMessage string         `json:"appliedMessage,omitempty"`
	// Health is Healthy, Unhealthy or Unknown.
	Health string `json:"health,omitempty"`
}

// Dependency is one object a workload depends on (Karmada's
// DependentObjectReference): a name or a label selector.
type Dependency struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	Namespace     string                `json:"namespace,omitempty"`
	Name          string                `json:"name,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// Replicas runs GetReplicas(desiredObj): the replicas (a number,
// fractions truncated) and nil or one replica's requirements (an empty
// table gives empty requirements, which still make a workload).
func (vm *VM) Replicas(script string, obj map[string]any) (int32, *policy.ReplicaRequirements, error) {
	var n int32
	var req *policy.ReplicaRequirements
	err := vm.call(script, "GetReplicas", 2, []any{obj}, func(_ *lua.LState, rets []lua.LValue) error {
		num, ok := rets[0].(lua.LNumber)
		if !ok {
			return fmt.Errorf("expect the returned replica type is number, but got %s", typeName(rets[0]))
		}
		f := math.Trunc(float64(num))
		if f > math.MaxInt32 || f < math.MinInt32 || math.IsNaN(f) {
			return fmt.Errorf("the returned replica %v is out of range", float64(num))
		}
		n = int32(f)
		v, isNil, err := returnedTable(rets[1], "requires", true)
		if err != nil || isNil {
			return err
		}
		req = &policy.ReplicaRequirements{}
		return into(restore(v, map[string]any{}), req)
	})
	return n, req, fail(policy.OpInterpretReplica, err)
}

// Components runs GetComponents(desiredObj): nil or the list of
// components, each with integral replicas.
func (vm *VM) Components(script string, obj map[string]any) ([]policy.Component, error) {
	var out []policy.Component
	err := vm.call(script, "GetComponents", 1, []any{obj}, func(_ *lua.LState, rets []lua.LValue) error {
		v, isNil, err := returnedTable(rets[0], "components", true)
		if err != nil || isNil {
			return err
		}
		if err := into(restore(v, []any{}), &out); err != nil {
			return fmt.Errorf("the returned components are not a list of {name, replicas, replicaRequirements}: %v", err)
		}
		return nil
	})
	return out, fail(policy.OpInterpretComponent, err)
}

// Revise runs ReviseReplica(desiredObj, desiredReplica) on the per-member
// copy and returns the object it gives back; empty tables are kept where
// the input had them.
func (vm *VM) Revise(script string, obj map[string]any, replicas int32) (map[string]any, error) {
	out, err := vm.object(script, "ReviseReplica", []any{obj, float64(replicas)}, obj)
	return out, fail(policy.OpReviseReplica, err)
}

// Retain runs Retain(desiredObj, observedObj): the object to write over
// the member's copy; empty tables are kept where either input had them.
func (vm *VM) Retain(script string, desired, observed map[string]any) (map[string]any, error) {
	out, err := vm.object(script, "Retain", []any{desired, observed}, desired, observed)
	return out, fail(policy.OpRetain, err)
}

// ReflectStatus runs ReflectStatus(observedObj): the status to record for
// the member (a table; nil is an error).
func (vm *VM) ReflectStatus(script string, observed map[string]any) (map[string]any, error) {
	var out map[string]any
	err := vm.call(script, "ReflectStatus", 1, []any{observed}, func(_ *lua.LState, rets []lua.LValue) error {
		v, _, err := returnedTable(rets[0], "status", false)
		if err != nil {
			return err
		}
		return statusOf(restore(v, map[string]any{}), &out)
	})
	return out, fail(policy.OpInterpretStatus, err)
}

// AggregateStatus runs AggregateStatus(desiredObj, statusItems) and
// returns the .status of the object it gives back (nil when it has none).
// items are sorted by cluster name first.
func (vm *VM) AggregateStatus(script string, desired map[string]any, items []StatusItem) (map[string]any, error) {
	sorted := append([]StatusItem(nil), items...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ClusterName < sorted[j].ClusterName })
	obj, err := vm.object(script, "AggregateStatus", []any{desired, sorted})
	if err != nil {
		return nil, fail(policy.OpAggregateStatus, err)
	}
	var status map[string]any
	if s, ok := obj["status"]; ok {
		if err := statusOf(s, &status); err != nil {
			return nil, fail(policy.OpAggregateStatus, err)
		}
	}
	return status, nil
}

// Health runs InterpretHealth(observedObj): a boolean, or an error (which
// makes the member's health Unknown, never Unhealthy).
func (vm *VM) Health(script string, observed map[string]any) (bool, error) {
	var healthy bool
	err := vm.call(script, "InterpretHealth", 1, []any{observed}, func(_ *lua.LState, rets []lua.LValue) error {
		b, ok := rets[0].(lua.LBool)
		if !ok {
			return fmt.Errorf("expect the returned health type is boolean, but got %s", typeName(rets[0]))
		}
		healthy = bool(b)
		return nil
	})
	return healthy, fail(policy.OpInterpretHealth, err)
}

// Dependencies runs every GetDependencies(desiredObj) script, checks each
// result (apiVersion, kind, and a name or a valid selector) and returns
// their union without duplicates, sorted by apiVersion, kind, namespace
// and name.
func (vm *VM) Dependencies(scripts []string, obj map[string]any) ([]Dependency, error) {
	seen := map[string]bool{}
	var out []Dependency
	for _, script := range scripts {
		var deps []Dependency
		err := vm.call(script, "GetDependencies", 1, []any{obj}, func(_ *lua.LState, rets []lua.LValue) error {
			v, _, err := returnedTable(rets[0], "dependencies", false)
			if err != nil {
				return err
			}
			if err := into(restore(v, []any{}), &deps); err != nil {
				return fmt.Errorf("the returned dependencies are not a list of {apiVersion, kind, namespace, name or labelSelector}: %v", err)
			}
			return verify(deps)
		})
		if err != nil {
			return nil, fail(policy.OpInterpretDependency, err)
		}
		for _, d := range deps {
			raw, _ := jsonKey(d)
			if !seen[raw] {
				seen[raw] = true
				out = append(out, d)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.APIVersion != b.APIVersion {
			return a.APIVersion < b.APIVersion
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out, nil
}

// verify is Karmada's VerifyDependencies.
func verify(deps []Dependency) error {
	var errs []error
	for i, d := range deps {
		if d.APIVersion == "" || d.Kind == "" {
			errs = append(errs, fmt.Errorf("dependency %d: missing required apiVersion or kind", i+1))
		}
		if d.Name == "" && d.LabelSelector == nil {
			errs = append(errs, fmt.Errorf("dependency %d: name and labelSelector cannot both be empty", i+1))
		}
		if d.LabelSelector != nil {
			if _, err := metav1.LabelSelectorAsSelector(d.LabelSelector); err != nil {
				errs = append(errs, fmt.Errorf("dependency %d: %v", i+1, err))
			}
		}
	}
	return errors.Join(errs...)
}

func jsonKey(d Dependency) (string, error) {
	sel, err := json.Marshal(d.LabelSelector)
	return d.APIVersion + "\x00" + d.Kind + "\x00" + d.Namespace + "\x00" + d.Name + "\x00" + string(sel), err
}

// object runs a function returning a whole object and restores its empty
// tables from refs.
func (vm *VM) object(script, fn string, args []any, refs ...map[string]any) (map[string]any, error) {
	var out map[string]any
	err := vm.call(script, fn, 1, args, func(_ *lua.LState, rets []lua.LValue) error {
		v, _, err := returnedTable(rets[0], "object", false)
		if err != nil {
			return err
		}
		plainRefs := make([]any, len(refs))
		for i, r := range refs {
			plainRefs[i] = plain(r)
		}
		m, ok := restore(v, map[string]any{}, plainRefs...).(map[string]any)
		if !ok {
			return fmt.Errorf("expect the returned object to be a table with string keys, got a list")
		}
		out = m
		return nil
	})
	return out, err
}

// returnedTable decodes a function's table result (what names it in the
// error); with nilOK a nil result is isNil and no error.
func returnedTable(v lua.LValue, what string, nilOK bool) (val any, isNil bool, err error) {
	if v == lua.LNil && nilOK {
		return nil, true, nil
	}
	t, ok := v.(*lua.LTable)
	if !ok {
		return nil, false, fmt.Errorf("expect the returned %s type is table, but got %s", what, typeName(v))
	}
	val, err = fromLua(t)
	return val, false, err
}

// statusOf takes a status: an object (a list is refused).
func statusOf(v any, out *map[string]any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("expect the status to be a table with string keys, got %T", v)
	}
	*out = m
	return nil
}
