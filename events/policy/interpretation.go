package policy

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConfigAPIVersion and KindResourceInterpreterCustomization name Karmada's
// config.karmada.io/v1alpha1 ResourceInterpreterCustomization (reference
// features §7.1): Lua scripts that teach Flotilla a kind's replicas,
// components, status, health and dependencies.
const (
	ConfigAPIVersion                     = "config.karmada.io/v1alpha1"
	KindResourceInterpreterCustomization = "ResourceInterpreterCustomization"
)

// ResourceInterpreterCustomization is cluster-scoped; its spec names one
// exact apiVersion and kind and the scripts for it.
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              InterpreterSpec `json:"spec"`
}

// InterpreterSpec is a customization's target and scripts.
type InterpreterSpec struct {
	Target         InterpreterTarget `json:"target"`
	Customizations Customizations    `json:"customizations"`
}

// InterpreterTarget is the exact apiVersion and kind a customization
// interprets.
type InterpreterTarget struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// Customizations holds one script per operation; nil or an empty script
// is no hook.
type Customizations struct {
	Retention                *LuaHook `json:"retention,omitempty"`
	ReplicaResource          *LuaHook `json:"replicaResource,omitempty"`
	ReplicaRevision          *LuaHook `json:"replicaRevision,omitempty"`
	StatusReflection         *LuaHook `json:"statusReflection,omitempty"`
	StatusAggregation        *LuaHook `json:"statusAggregation,omitempty"`
	HealthInterpretation     *LuaHook `json:"healthInterpretation,omitempty"`
	DependencyInterpretation *LuaHook `json:"dependencyInterpretation,omitempty"`
	ComponentResource        *LuaHook `json:"componentResource,omitempty"`
}

// LuaHook is one customization member: a Lua script defining the global
// function its operation calls.
type LuaHook struct {
	LuaScript string `json:"luaScript"`
}

// Karmada's InterpreterOperation names, used in errors and reasons.
const (
	OpInterpretReplica    = "InterpretReplica"
	OpInterpretComponent  = "InterpretComponent"
	OpReviseReplica       = "ReviseReplica"
	OpRetain              = "Retain"
	OpInterpretStatus     = "InterpretStatus"
	OpAggregateStatus     = "AggregateStatus"
	OpInterpretHealth     = "InterpretHealth"
	OpInterpretDependency = "InterpretDependency"
)

// HookField pairs a customization member's JSON name with its operation.
type HookField struct {
	Field, Operation string
	get              func(*Customizations) *LuaHook
}

// Script returns the member's script in c ("" when absent).
func (f HookField) Script(c *Customizations) string {
	if h := f.get(c); h != nil {
		return h.LuaScript
	}
	return ""
}

// Hooks lists the members of Customizations in Karmada's field order.
var Hooks = []HookField{
	{"retention", OpRetain, func(c *Customizations) *LuaHook { return c.Retention }},
	{"replicaResource", OpInterpretReplica, func(c *Customizations) *LuaHook { return c.ReplicaResource }},
	{"replicaRevision", OpReviseReplica, func(c *Customizations) *LuaHook { return c.ReplicaRevision }},
	{"statusReflection", OpInterpretStatus, func(c *Customizations) *LuaHook { return c.StatusReflection }},
	{"statusAggregation", OpAggregateStatus, func(c *Customizations) *LuaHook { return c.StatusAggregation }},
	{"healthInterpretation", OpInterpretHealth, func(c *Customizations) *LuaHook { return c.HealthInterpretation }},
	{"dependencyInterpretation", OpInterpretDependency, func(c *Customizations) *LuaHook { return c.DependencyInterpretation }},
	{"componentResource", OpInterpretComponent, func(c *Customizations) *LuaHook { return c.ComponentResource }},
}

// Interpretation is what every customization of one kind says together
// (Merge): the script of each operation, and every dependency script.
// It travels in the kind's bindings, so that each daemon runs the same
// scripts for the same generation.
type Interpretation struct {
	// Names are the customizations merged, sorted.
	Names             []string `json:"names"`
	ReplicaResource   string   `json:"replicaResource,omitempty"`
	ComponentResource string   `json:"componentResource,omitempty"`
	ReplicaRevision   string   `json:"replicaRevision,omitempty"`
	Retention         string   `json:"retention,omitempty"`
	StatusReflection  string   `json:"statusReflection,omitempty"`
	StatusAggregation string   `json:"statusAggregation,omitempty"`
	Health            string   `json:"healthInterpretation,omitempty"`
	Dependencies      []string `json:"dependencyInterpretation,omitempty"`
}

// Merge joins the customizations whose target is exactly apiVersion and
// kind (reference features §7.3.4): sorted by name, each operation takes
// the first non-empty script; every non-empty dependency script is kept,
// in that order. nil when none has a hook.
func Merge(rics []ResourceInterpreterCustomization, apiVersion, kind string) *Interpretation {
	var mine []ResourceInterpreterCustomization
	for _, r := range rics {
		if r.Spec.Target.APIVersion == apiVersion && r.Spec.Target.Kind == kind {
			mine = append(mine, r)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].Name < mine[j].Name })
	out := &Interpretation{}
	// The field each operation's first script goes to.
	slots := map[string]*string{
		OpInterpretReplica: &out.ReplicaResource, OpInterpretComponent: &out.ComponentResource,
		OpReviseReplica: &out.ReplicaRevision, OpRetain: &out.Retention, OpInterpretStatus: &out.StatusReflection,
		OpAggregateStatus: &out.StatusAggregation, OpInterpretHealth: &out.Health,
	}
	hooked := false
	for _, r := range mine {
		for _, f := range Hooks {
			s := f.Script(&r.Spec.Customizations)
			if s == "" {
				continue
			}
			hooked = true
			if f.Operation == OpInterpretDependency {
				out.Dependencies = append(out.Dependencies, s)
			} else if slot := slots[f.Operation]; *slot == "" {
				*slot = s
			}
		}
		out.Names = append(out.Names, r.Name)
	}
	if !hooked {
		return nil
	}
	return out
}

// ReplicaRequirements are one replica's needs as an interpreter returns
// them (Karmada's work/v1alpha2 ReplicaRequirements).
type ReplicaRequirements struct {
	NodeClaim         *NodeClaim          `json:"nodeClaim,omitempty"`
	ResourceRequest   corev1.ResourceList `json:"resourceRequest,omitempty"`
	Namespace         string              `json:"namespace,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`
}

// NodeClaim is where a replica may run inside a member.
type NodeClaim struct {
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`
	NodeSelector     map[string]string    `json:"nodeSelector,omitempty"`
	Tolerations      []corev1.Toleration  `json:"tolerations,omitempty"`
}

// ComponentReplicas is one component's share in a cluster of a placement
// (Karmada's spec.clusters[].components[]).
type ComponentReplicas struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
}
