package validation

import (
	"github.com/flotilla-io/flotilla/events/policy"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// Purge modes: Karmada's current spellings and the older ones seed 000 uses.
const (
	purgeDirectly    = "Directly"
	purgeGracefully  = "Gracefully"
	purgeNever       = "Never"
	purgeImmediately = "Immediately" // old spelling of Directly
	purgeGraciously  = "Graciously"  // old spelling of Gracefully

	defaultGracePeriodSeconds = 600 // Karmada's webhook default for Gracefully
	defaultTolerationSeconds  = 300 // Karmada's API default
)

// Where a rule comes from decides how it is reported: Karmada's CRD schema
// and the API server reject (errors); rules only Karmada's admission webhook
// enforces are warnings, as are the seed spellings Flotilla accepts.

func checkPropagation(obj map[string]any, ns string, namespaced bool, rep *report) {
	var pp policy.PropagationPolicy
	if !decode(obj, &pp, "", rep) {
		return
	}
	s := &pp.Spec
	checkResourceSelectors(s.ResourceSelectors, "spec.resourceSelectors", namespaced, ns, true, rep)
	rep.enum("spec.preemption", s.Preemption, "Always", "Never")
	if s.Preemption == "Always" {
		for i, sel := range s.ResourceSelectors {
			if sel.Name == "" {
				rep.warnf(idx("spec.resourceSelectors", i)+".name", "preemption Always needs every resource selector to name its resource (Karmada's webhook rejects this)")
			}
		}
	}
	rep.enum("spec.conflictResolution", s.ConflictResolution, "Abort", "Overwrite")
	rep.enum("spec.activationPreference", s.ActivationPreference, "Lazy")
	if sp := s.SchedulePriority; sp != nil {
		if sp.PriorityClassSource == "" {
			rep.required("spec.schedulePriority.priorityClassSource")
		}
		rep.enum("spec.schedulePriority.priorityClassSource", sp.PriorityClassSource, policy.PriorityClassSourceKube)
		if sp.PriorityClassName == "" {
			rep.required("spec.schedulePriority.priorityClassName")
		}
	}
	checkPlacement(&s.Placement, "spec.placement", rep)
	checkFailover(s.Failover, "spec.failover", rep)
	if pf := s.Placement.Failover; pf != nil {
		rep.warnf("spec.placement.failover", "seed extension: failover belongs in spec.failover; merged into it")
		checkFailover(pf, "spec.placement.failover", rep)
		if sf := s.Failover; sf != nil {
			both := func(name string, a, b bool) {
				if a && b {
					rep.errorf("spec.placement.failover."+name, "may not be set in both spec.failover and spec.placement.failover")
				}
			}
			both("application", sf.Application != nil, pf.Application != nil)
			both("cluster", sf.Cluster != nil, pf.Cluster != nil)
			both("applicationFailureDetection", len(sf.ApplicationFailureDetection) > 0, len(pf.ApplicationFailureDetection) > 0)
			both("clusterFailureDetection", len(sf.ClusterFailureDetection) > 0, len(pf.ClusterFailureDetection) > 0)
		}
	}
	if !s.PropagateDeps {
		for _, p := range []struct {
			path string
			f    *policy.FailoverBehavior
		}{{"spec.failover.application", s.Failover}, {"spec.placement.failover.application", s.Placement.Failover}} {
			if p.f != nil && p.f.Application != nil {
				rep.warnf(p.path, "application failover without propagateDeps: true (Karmada's webhook demands it; Flotilla accepts it)")
			}
		}
	}
	defaultPropagation(obj, ns, namespaced)
}

// defaultPropagation applies Karmada's webhook defaults and normalises the
// seed spellings in the plain object.
func defaultPropagation(obj map[string]any, ns string, namespaced bool) {
	spec := mapAt(obj, "spec")
	if spec == nil {
		return
	}
	defaultSelectorNamespaces(spec, ns, namespaced)
	if placement := mapAt(spec, "placement"); placement != nil {
		if rs := mapAt(placement, "replicaScheduling"); rs != nil {
			if str(rs["replicaSchedulingType"]) == "" {
				rs["replicaSchedulingType"] = policy.ReplicaSchedulingTypeDivided
			}
			if rs["replicaSchedulingType"] == policy.ReplicaSchedulingTypeDivided && str(rs["replicaDivisionPreference"]) == "" {
				rs["replicaDivisionPreference"] = policy.DivisionPreferenceWeighted
			}
			if wp := mapAt(rs, "weightPreference"); wp != nil {
				if alias, ok := wp["staticClusterWeight"]; ok {
					if list, _ := wp["staticWeightList"].([]any); len(list) == 0 {
						wp["staticWeightList"] = alias
					}
					delete(wp, "staticClusterWeight")
				}
			}
		}
		for _, sc := range listAt(placement, "spreadConstraints") {
			if sc == nil {
				continue
			}
			if str(sc["spreadByField"]) == "" && str(sc["spreadByLabel"]) == "" {
				sc["spreadByField"] = "cluster"
			}
			if n, _ := sc["minGroups"].(int64); n == 0 {
				sc["minGroups"] = int64(1)
			}
		}
		if pf, ok := placement["failover"].(map[string]any); ok {
			delete(placement, "failover")
			if sf := mapAt(spec, "failover"); sf != nil {
				for k, v := range pf {
					if _, set := sf[k]; !set {
						sf[k] = v
					}
				}
			} else {
				spec["failover"] = pf
			}
		}
	}
	if f := mapAt(spec, "failover"); f != nil {
		if a := mapAt(f, "application"); a != nil {
			mode := normalPurgeMode(str(a["purgeMode"]))
			if mode == "" {
				mode = purgeGracefully
			}
			a["purgeMode"] = mode
			if mode == purgeGracefully && a["gracePeriodSeconds"] == nil {
				a["gracePeriodSeconds"] = int64(defaultGracePeriodSeconds)
			}
			dc := mapAt(a, "decisionConditions")
			if dc == nil {
				dc = map[string]any{}
				a["decisionConditions"] = dc
			}
			if dc["tolerationSeconds"] == nil {
				dc["tolerationSeconds"] = int64(defaultTolerationSeconds)
			}
		}
		if c := mapAt(f, "cluster"); c != nil {
			if mode := str(c["purgeMode"]); mode != "" {
				c["purgeMode"] = normalPurgeMode(mode)
			}
		}
	}
}

// defaultSelectorNamespaces gives the resource selectors of a namespaced
// policy the policy's namespace, as Karmada's webhook does.
func defaultSelectorNamespaces(spec map[string]any, ns string, namespaced bool) {
	if !namespaced {
		return
	}
	for _, sel := range listAt(spec, "resourceSelectors") {
		if sel != nil && str(sel["namespace"]) == "" {
			sel["namespace"] = ns
		}
	}
}

func normalPurgeMode(m string) string {
	switch m {
	case purgeImmediately:
		return purgeDirectly
	case purgeGraciously:
		return purgeGracefully
	}
	return m
}

func checkPlacement(pl *policy.Placement, p string, rep *report) {
	if pl.ClusterAffinity != nil && len(pl.ClusterAffinities) > 0 {
		rep.errorf(p+".clusterAffinities", "forbidden: may not be set together with clusterAffinity")
	}
	checkAffinity(pl.ClusterAffinity, p+".clusterAffinity", rep)
	names := map[string]bool{}
	for i := range pl.ClusterAffinities {
		t := &pl.ClusterAffinities[i]
		tp := idx(p+".clusterAffinities", i)
		switch {
		case t.AffinityName == "":
			rep.required(tp + ".affinityName")
		case names[t.AffinityName]:
			rep.errorf(tp+".affinityName", "duplicate value %q", t.AffinityName)
		}
		names[t.AffinityName] = true
		checkAffinity(&t.ClusterAffinity, tp, rep)
		for j := range t.OverflowAffinities {
			checkAffinity(&t.OverflowAffinities[j], idx(tp+".overflowAffinities", j), rep)
		}
	}
	for i, t := range pl.ClusterTolerations {
		checkToleration(t, idx(p+".clusterTolerations", i), rep)
	}
	checkSpread(pl.SpreadConstraints, p+".spreadConstraints", rep)
	checkWorkloadAffinity(pl.WorkloadAffinity, p+".workloadAffinity", rep)
	if rs := pl.ReplicaScheduling; rs != nil {
		checkReplicaScheduling(rs, p+".replicaScheduling", rep)
	}
}

func checkSpread(scs []policy.SpreadConstraint, p string, rep *report) {
	seen := map[string]bool{}
	hasCluster, firstField := false, -1
	for i, sc := range scs {
		sp := idx(p, i)
		if sc.SpreadByField != "" && sc.SpreadByLabel != "" {
			rep.errorf(sp+".spreadByLabel", "forbidden: may not be set together with spreadByField")
		}
		rep.enum(sp+".spreadByField", sc.SpreadByField, "cluster", "region", "zone", "provider")
		if sc.SpreadByLabel != "" {
			for _, msg := range kvalidation.IsQualifiedName(sc.SpreadByLabel) {
				rep.errorf(sp+".spreadByLabel", "invalid value %q: %s", sc.SpreadByLabel, msg)
			}
		}
		if sc.MinGroups < 0 {
			rep.errorf(sp+".minGroups", "invalid value %d: must be greater than or equal to 0", sc.MinGroups)
		}
		if sc.MaxGroups < 0 {
			rep.errorf(sp+".maxGroups", "invalid value %d: must be greater than or equal to 0", sc.MaxGroups)
		}
		minGroups := max(sc.MinGroups, 1) // the webhook defaults 0 to 1
		if sc.MaxGroups > 0 && sc.MaxGroups < minGroups {
			rep.errorf(sp+".maxGroups", "invalid value %d: must be greater than or equal to minGroups (%d)", sc.MaxGroups, minGroups)
		}
		field := sc.SpreadByField
		if field == "" && sc.SpreadByLabel == "" {
			field = "cluster" // the webhook's default
		}
		if field == "" {
			continue
		}
		if seen[field] {
			rep.warnf(sp+".spreadByField", "duplicate spreadByField %q (Karmada's webhook rejects it)", field)
		}
		seen[field] = true
		if field == "cluster" {
			hasCluster = true
		} else if firstField < 0 {
			firstField = i
		}
	}
	if firstField >= 0 && !hasCluster {
		rep.warnf(idx(p, firstField)+".spreadByField", "seed extension: spreadByField %q without a spreadByField cluster constraint (Karmada's webhook demands one)", scs[firstField].SpreadByField)
	}
}

func checkReplicaScheduling(rs *policy.ReplicaSchedulingStrategy, p string, rep *report) {
	rep.enum(p+".replicaSchedulingType", rs.ReplicaSchedulingType, policy.ReplicaSchedulingTypeDuplicated, policy.ReplicaSchedulingTypeDivided)
	rep.enum(p+".replicaDivisionPreference", rs.ReplicaDivisionPreference,
		policy.DivisionPreferenceAggregated, policy.DivisionPreferenceWeighted, policy.DivisionPreferenceCostOptimized)
	if wp := rs.WeightPreference; wp != nil {
		wpp := p + ".weightPreference"
		rep.enum(wpp+".dynamicWeight", wp.DynamicWeight, policy.DynamicWeightAvailableReplicas)
		if len(wp.StaticClusterWeight) > 0 {
			if len(wp.StaticWeightList) > 0 {
				rep.errorf(wpp+".staticClusterWeight", "forbidden: may not be set together with staticWeightList (it is its alias)")
			} else {
				rep.warnf(wpp+".staticClusterWeight", "seed spelling of staticWeightList: accepted as its alias")
			}
		}
		checkWeights(wp.StaticWeightList, wpp+".staticWeightList", rep)
		checkWeights(wp.StaticClusterWeight, wpp+".staticClusterWeight", rep)
		if wp.DynamicWeight != "" && len(wp.StaticWeightList)+len(wp.StaticClusterWeight) > 0 {
			rep.warnf(wpp+".dynamicWeight", "static weights are ignored when dynamicWeight is set")
		}
	}
	if cw := rs.CostWeights; cw != nil {
		if cw.CPU != nil && *cw.CPU < 0 {
			rep.errorf(p+".costWeights.cpu", "invalid value %g: must be greater than or equal to 0", *cw.CPU)
		}
		if cw.Memory != nil && *cw.Memory < 0 {
			rep.errorf(p+".costWeights.memory", "invalid value %g: must be greater than or equal to 0", *cw.Memory)
		}
		if rs.ReplicaDivisionPreference != policy.DivisionPreferenceCostOptimized {
			rep.warnf(p+".costWeights", "ignored: costWeights only apply with replicaDivisionPreference CostOptimized")
		}
	}
}

func checkWeights(ws []policy.StaticClusterWeight, p string, rep *report) {
	for i := range ws {
		wp := idx(p, i)
		if ws[i].Weight < 1 {
			rep.errorf(wp+".weight", "invalid value %d: must be greater than or equal to 1", ws[i].Weight)
		}
		checkAffinity(&ws[i].TargetCluster, wp+".targetCluster", rep)
	}
}

func checkFailover(f *policy.FailoverBehavior, p string, rep *report) {
	if f == nil {
		return
	}
	if a := f.Application; a != nil {
		ap := p + ".application"
		if t := a.DecisionConditions.TolerationSeconds; t != nil && *t < 0 {
			rep.errorf(ap+".decisionConditions.tolerationSeconds", "invalid value %d: must be greater than or equal to 0", *t)
		}
		mode := checkPurgeMode(a.PurgeMode, ap+".purgeMode", rep, purgeDirectly, purgeGracefully, purgeNever)
		if mode == "" {
			mode = purgeGracefully
		}
		if g := a.GracePeriodSeconds; g != nil {
			if mode == purgeGracefully && *g <= 0 {
				rep.errorf(ap+".gracePeriodSeconds", "invalid value %d: must be greater than 0", *g)
			}
			if mode != purgeGracefully {
				rep.warnf(ap+".gracePeriodSeconds", "ignored: only used with purgeMode Gracefully (Karmada's webhook rejects it)")
			}
		}
		checkStatePreservation(a.StatePreservation, ap+".statePreservation", rep)
	}
	if c := f.Cluster; c != nil {
		cp := p + ".cluster"
		checkPurgeMode(c.PurgeMode, cp+".purgeMode", rep, purgeDirectly, purgeGracefully)
		checkStatePreservation(c.StatePreservation, cp+".statePreservation", rep)
	}
	for i, r := range f.ApplicationFailureDetection {
		checkDetectionRule(r.Rule, idx(p+".applicationFailureDetection", i)+".rule", true, rep)
	}
	for i, r := range f.ClusterFailureDetection {
		checkDetectionRule(r.Rule, idx(p+".clusterFailureDetection", i)+".rule", false, rep)
	}
}

// checkPurgeMode accepts the current spellings silently and the old ones
// with a warning; it returns the current spelling.
func checkPurgeMode(mode, p string, rep *report, allowed ...string) string {
	if old := normalPurgeMode(mode); old != mode {
		rep.warnf(p, "old Karmada spelling %q: accepted and read as %q", mode, old)
		return old
	}
	rep.enum(p, mode, allowed...)
	return mode
}

func checkStatePreservation(sp *policy.StatePreservation, p string, rep *report) {
	if sp == nil {
		return
	}
	if len(sp.Rules) == 0 {
		rep.errorf(p+".rules", "required value: at least one rule")
	}
	for i, r := range sp.Rules {
		rp := idx(p+".rules", i)
		if r.AliasLabelName == "" {
			rep.required(rp + ".aliasLabelName")
		} else {
			for _, msg := range kvalidation.IsQualifiedName(r.AliasLabelName) {
				rep.errorf(rp+".aliasLabelName", "invalid value %q: %s", r.AliasLabelName, msg)
			}
		}
		if r.JSONPath == "" {
			rep.required(rp + ".jsonPath")
		}
	}
}

// checkWorkloadAffinity applies Karmada's ValidateWorkloadAffinity
// (reference features §1.1): each groupByLabelKey is a label key, and the
// two terms do not group by the same one. Webhook rules, refused as errors
// all the same: a bad key would silently group nothing.
func checkWorkloadAffinity(wa *policy.WorkloadAffinity, p string, rep *report) {
	if wa == nil {
		return
	}
	for _, t := range []struct {
		path string
		term *policy.WorkloadAffinityTerm
	}{{p + ".affinity.groupByLabelKey", wa.Affinity}, {p + ".antiAffinity.groupByLabelKey", wa.AntiAffinity}} {
		if t.term == nil {
			continue
		}
		if t.term.GroupByLabelKey == "" {
			rep.required(t.path)
			continue
		}
		for _, msg := range kvalidation.IsQualifiedName(t.term.GroupByLabelKey) {
			rep.errorf(t.path, "invalid value %q: %s", t.term.GroupByLabelKey, msg)
		}
	}
	if wa.Affinity != nil && wa.AntiAffinity != nil && wa.Affinity.GroupByLabelKey != "" && wa.Affinity.GroupByLabelKey == wa.AntiAffinity.GroupByLabelKey {
		rep.errorf(p, "affinity and antiAffinity must not use the same groupByLabelKey")
	}
}
