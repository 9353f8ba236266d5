package interpreter

import (
	"encoding/json"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events/policy"
)

// openKube is the `kube` module scripts get with require("kube")
// (reference features §7.5.4).
func openKube(l *lua.LState) int {
	mod := l.SetFuncs(l.NewTable(), map[string]lua.LGFunction{
		"resourceAdd":             kubeResourceAdd,
		"getResourceQuantity":     kubeGetResourceQuantity,
		"accuratePodRequirements": kubeAccuratePodRequirements,
		"getPodDependencies":      kubeGetPodDependencies,
	})
	l.Push(mod)
	return 1
}

// quantityArg reads argument n: a quantity string, or nil for zero; any
// other type (a number included) is a type error.
func quantityArg(l *lua.LState, n int) resource.Quantity {
	switch v := l.Get(n).(type) {
	case *lua.LNilType:
		return resource.Quantity{}
	case lua.LString:
		q, err := resource.ParseQuantity(string(v))
		if err != nil {
			l.ArgError(n, err.Error())
		}
		return q
	default:
		l.TypeError(n, lua.LTString)
	}
	return resource.Quantity{}
}

// kubeResourceAdd returns the sum of its quantity arguments as a quantity
// string.
func kubeResourceAdd(l *lua.LState) int {
	var sum resource.Quantity
	for i := 1; i <= l.GetTop(); i++ {
		sum.Add(quantityArg(l, i))
	}
	l.Push(lua.LString(sum.String()))
	return 1
}

// kubeGetResourceQuantity returns a quantity string as a number.
func kubeGetResourceQuantity(l *lua.LState) int {
	q := quantityArg(l, 1)
	l.Push(lua.LNumber(q.AsApproximateFloat64()))
	return 1
}

// podTemplateArg decodes argument n as a pod template.
func podTemplateArg(l *lua.LState, n int) *corev1.PodTemplateSpec {
	t := l.CheckTable(n)
	v, err := fromLua(t)
	if err != nil {
		l.ArgError(n, err.Error())
	}
	var pt corev1.PodTemplateSpec
	if err := into(restore(v, map[string]any{}), &pt); err != nil {
		l.ArgError(n, "not a pod template: "+err.Error())
	}
	return &pt
}

// kubeAccuratePodRequirements returns one replica's requirements of a pod
// template: its effective requests, node selector, tolerations and
// required node affinity; nil when it has none.
func kubeAccuratePodRequirements(l *lua.LState) int {
	req := PodRequirements(&podTemplateArg(l, 1).Spec)
	if req == nil {
		l.Push(lua.LNil)
		return 1
	}
	v, err := toLua(l, req)
	if err != nil {
		l.RaiseError("%v", err)
	}
	l.Push(v)
	return 1
}

// PodRequirements is what kube.accuratePodRequirements returns for a pod
// spec; nil when it requests nothing and constrains no node.
func PodRequirements(spec *corev1.PodSpec) *policy.ReplicaRequirements {
	req := &policy.ReplicaRequirements{ResourceRequest: PodRequests(spec)}
	nc := &policy.NodeClaim{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		nc.HardNodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if len(nc.NodeSelector) > 0 || len(nc.Tolerations) > 0 || nc.HardNodeAffinity != nil {
		req.NodeClaim = nc
	}
	if req.NodeClaim == nil && len(req.ResourceRequest) == 0 {
		return nil
	}
	return req
}

// PodRequests is a pod's effective request: per resource the larger of the
// sum over its containers and the largest init container, each
// container's requests defaulted from its limits. nil when empty.
func PodRequests(spec *corev1.PodSpec) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range spec.Containers {
		policy.AddTo(sum, containerRequests(c))
	}
	for _, c := range spec.InitContainers {
		for name, q := range containerRequests(c) {
			if cur, ok := sum[name]; !ok || q.Cmp(cur) > 0 {
				sum[name] = q
			}
		}
	}
	if len(sum) == 0 {
		return nil
	}
	return sum
}

func containerRequests(c corev1.Container) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range c.Resources.Limits {
		out[name] = q
	}
	for name, q := range c.Resources.Requests {
		out[name] = q
	}
	return out
}

// kubeGetPodDependencies returns the ConfigMaps, Secrets, PVCs and
// ServiceAccount (unless "default") a pod template references, in
// namespace ("default" when nil).
func kubeGetPodDependencies(l *lua.LState) int {
	pt := podTemplateArg(l, 1)
	ns := l.OptString(2, "default")
	raw, err := json.Marshal(pt.Spec)
	if err != nil {
		l.RaiseError("%v", err)
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		l.RaiseError("%v", err)
	}
	deps := []Dependency{}
	for _, r := range policy.PodReferences(spec) {
		deps = append(deps, Dependency{APIVersion: "v1", Kind: r.Kind, Namespace: ns, Name: r.Name})
	}
	v, err := toLua(l, deps)
	if err != nil {
		l.RaiseError("%v", err)
	}
	l.Push(v)
	return 1
}
