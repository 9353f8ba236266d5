package core

import (
	"strconv"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	"github.com/flotilla-io/flotilla/schedulerd/plugins"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func newDefault() *Scheduler { return New(plugins.DefaultProfile()) }

type clusterOpt func(*framework.ClusterInfo)

func cluster(name string, opts ...clusterOpt) framework.ClusterInfo {
	c := framework.ClusterInfo{Name: name, Ready: true}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func clusters(names ...string) []framework.ClusterInfo {
	out := make([]framework.ClusterInfo, len(names))
	for i, n := range names {
		out[i] = cluster(n)
	}
	return out
}

// free gives the cluster room for n pods (and no other figures).
func free(n int64) clusterOpt {
	return func(c *framework.ClusterInfo) {
		c.Allocatable = corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(n, resource.DecimalSI)}
	}
}

func labels(kv ...string) clusterOpt {
	return func(c *framework.ClusterInfo) {
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			c.Labels[kv[i]] = kv[i+1]
		}
	}
}

func region(r string) clusterOpt   { return func(c *framework.ClusterInfo) { c.Spec.Region = r } }
func provider(p string) clusterOpt { return func(c *framework.ClusterInfo) { c.Spec.Provider = p } }
func taint(key, value string, effect corev1.TaintEffect) clusterOpt {
	return func(c *framework.ClusterInfo) {
		c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

func deployment(name string, replicas int32, pl policy.Placement) events.Binding {
	return events.Binding{
		Key:        events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: name},
		APIVersion: "apps/v1",
		Replicas:   replicas,
		Spec:       &policy.PropagationSpec{Placement: pl},
	}
}

func names(ns ...string) *policy.ClusterAffinity { return &policy.ClusterAffinity{ClusterNames: ns} }

func weight(cluster string, w int64) policy.StaticClusterWeight {
	return policy.StaticClusterWeight{TargetCluster: policy.ClusterAffinity{ClusterNames: []string{cluster}}, Weight: w}
}

func staticWeighted(rules ...policy.StaticClusterWeight) *policy.ReplicaSchedulingStrategy {
	return &policy.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policy.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policy.DivisionPreferenceWeighted,
		WeightPreference:          &policy.ClusterPreferences{StaticWeightList: rules},
	}
}

func dynamicWeighted() *policy.ReplicaSchedulingStrategy {
	return &policy.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policy.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policy.DivisionPreferenceWeighted,
		WeightPreference:          &policy.ClusterPreferences{DynamicWeight: policy.DynamicWeightAvailableReplicas},
	}
}

func aggregated() *policy.ReplicaSchedulingStrategy {
	return &policy.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policy.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policy.DivisionPreferenceAggregated,
	}
}

func duplicated() *policy.ReplicaSchedulingStrategy {
	return &policy.ReplicaSchedulingStrategy{ReplicaSchedulingType: policy.ReplicaSchedulingTypeDuplicated}
}

// placed renders a placement as "a:1 b:2" for readable comparisons.
func placed(ts []events.TargetCluster) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += " "
		}
		s += t.Name + ":" + strconv.Itoa(int(t.Replicas))
	}
	return s
}

// targetsOf parses "a:1 b:2".
func targetsOf(s string) []events.TargetCluster {
	var out []events.TargetCluster
	name, num := "", ""
	inNum := false
	flush := func() {
		if name != "" {
			n, _ := strconv.Atoi(num)
			out = append(out, events.TargetCluster{Name: name, Replicas: int32(n)})
		}
		name, num, inNum = "", "", false
	}
	for _, r := range s {
		switch {
		case r == ' ':
			flush()
		case r == ':':
			inNum = true
		case inNum:
			num += string(r)
		default:
			name += string(r)
		}
	}
	flush()
	return out
}

func resourceMust(s string) resource.Quantity { return resource.MustParse(s) }
