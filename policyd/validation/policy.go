package validation

import (
	"slices"
	"strconv"
	"strings"

	"github.com/flotilla-io/flotilla/events/policy"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		rep.enum("spec.schedulePriority.priorityClassSource", sp.PriorityClassSource, "KubePriorityClass")
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

func checkResourceSelectors(sels []policy.ResourceSelector, p string, namespaced bool, ns string, required bool, rep *report) {
	if required && len(sels) == 0 {
		rep.errorf(p, "required value: at least one resource selector")
	}
	for i, sel := range sels {
		sp := idx(p, i)
		if sel.APIVersion == "" {
			rep.required(sp + ".apiVersion")
		}
		if sel.Kind == "" {
			rep.required(sp + ".kind")
		}
		checkLabelSelector(sel.LabelSelector, sp+".labelSelector", rep)
		if namespaced && sel.Namespace != "" && sel.Namespace != ns {
			rep.warnf(sp+".namespace", "selector namespace %q differs from the policy's namespace %q: Karmada's webhook rejects this and the selector can never match", sel.Namespace, ns)
		}
	}
}

// checkLabelSelector checks a label selector the way the API server does
// (operators, keys, values) and then asks apimachinery to build it.
func checkLabelSelector(sel *metav1.LabelSelector, p string, rep *report) {
	if sel == nil {
		return
	}
	before := len(rep.errs)
	checkLabels(sel.MatchLabels, p+".matchLabels", false, rep)
	for i, req := range sel.MatchExpressions {
		rp := idx(p+".matchExpressions", i)
		checkRequirementKey(req.Key, rp+".key", true, rep)
		switch req.Operator {
		case metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn:
			if len(req.Values) == 0 {
				rep.errorf(rp+".values", "required value: operator %s needs at least one value", req.Operator)
			}
		case metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist:
			if len(req.Values) > 0 {
				rep.errorf(rp+".values", "forbidden: operator %s takes no values", req.Operator)
			}
		case "":
			rep.required(rp + ".operator")
		default:
			rep.errorf(rp+".operator", "unsupported value %q: must be one of In, NotIn, Exists, DoesNotExist", req.Operator)
		}
		for j, v := range req.Values {
			for _, msg := range kvalidation.IsValidLabelValue(v) {
				rep.errorf(idx(rp+".values", j), "invalid value %q: %s", v, msg)
			}
		}
	}
	if len(rep.errs) == before {
		if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
			rep.errorf(p, "invalid label selector: %v", err)
		}
	}
}

func checkRequirementKey(key, p string, labelKey bool, rep *report) {
	if key == "" {
		rep.required(p)
		return
	}
	if labelKey {
		for _, msg := range kvalidation.IsQualifiedName(key) {
			rep.errorf(p, "invalid value %q: %s", key, msg)
		}
	}
}

// checkNodeRequirement checks a node-selector requirement (cluster field
// selectors and soft preferences use this shape).
func checkNodeRequirement(req corev1.NodeSelectorRequirement, p string, labelKey bool, rep *report) {
	checkRequirementKey(req.Key, p+".key", labelKey, rep)
	switch req.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(req.Values) == 0 {
			rep.errorf(p+".values", "required value: operator %s needs at least one value", req.Operator)
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(req.Values) > 0 {
			rep.errorf(p+".values", "forbidden: operator %s takes no values", req.Operator)
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(req.Values) != 1 {
			rep.errorf(p+".values", "invalid value: operator %s takes exactly one value", req.Operator)
		} else if _, err := strconv.ParseInt(req.Values[0], 10, 64); err != nil {
			rep.errorf(p+".values[0]", "invalid value %q: operator %s needs an integer", req.Values[0], req.Operator)
		}
	case "":
		rep.required(p + ".operator")
	default:
		rep.errorf(p+".operator", "unsupported value %q: must be one of In, NotIn, Exists, DoesNotExist, Gt, Lt", req.Operator)
	}
}

var clusterFields = []string{"provider", "region", "zone"}

func checkAffinity(a *policy.ClusterAffinity, p string, rep *report) {
	if a == nil {
		return
	}
	checkLabelSelector(a.LabelSelector, p+".labelSelector", rep)
	if fs := a.FieldSelector; fs != nil {
		for i, req := range fs.MatchExpressions {
			rp := idx(p+".fieldSelector.matchExpressions", i)
			checkNodeRequirement(req, rp, false, rep)
			if req.Key != "" && !slices.Contains(clusterFields, req.Key) {
				rep.warnf(rp+".key", "field %q is not a cluster field: Karmada's webhook accepts provider, region and zone only; In never matches it", req.Key)
			}
			if req.Operator != corev1.NodeSelectorOpIn && req.Operator != corev1.NodeSelectorOpNotIn && req.Operator != "" {
				rep.warnf(rp+".operator", "Karmada's webhook accepts only In and NotIn in a field selector")
			}
		}
	}
	for i, t := range a.PreferredDuringSchedulingIgnoredDuringExecution {
		tp := idx(p+".preferredDuringSchedulingIgnoredDuringExecution", i)
		if t.Weight < 1 || t.Weight > 100 {
			rep.errorf(tp+".weight", "invalid value %d: must be between 1 and 100", t.Weight)
		}
		for j, req := range t.Preference.MatchExpressions {
			checkNodeRequirement(req, idx(tp+".preference.matchExpressions", j), true, rep)
		}
		for j, req := range t.Preference.MatchFields {
			rp := idx(tp+".preference.matchFields", j)
			checkNodeRequirement(req, rp, false, rep)
			if req.Key != "" && !slices.Contains(clusterFields, req.Key) {
				rep.errorf(rp+".key", "unsupported value %q: must be one of %s", req.Key, strings.Join(clusterFields, ", "))
			}
		}
	}
}

func checkToleration(t corev1.Toleration, p string, rep *report) {
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
		if t.Key == "" {
			rep.errorf(p+".operator", "invalid value %q: must be Exists when key is empty", t.Operator)
		}
	case corev1.TolerationOpExists:
		if t.Value != "" {
			rep.errorf(p+".value", "forbidden: must be empty when operator is Exists")
		}
	default:
		rep.errorf(p+".operator", "unsupported value %q: must be one of Equal, Exists", t.Operator)
	}
	if t.Key != "" {
		for _, msg := range kvalidation.IsQualifiedName(t.Key) {
			rep.errorf(p+".key", "invalid value %q: %s", t.Key, msg)
		}
	}
	rep.enum(p+".effect", string(t.Effect), "NoSchedule", "PreferNoSchedule", "NoExecute")
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		rep.errorf(p+".tolerationSeconds", "forbidden: only with effect NoExecute")
	}
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

func checkOverride(obj map[string]any, ns string, namespaced bool, rep *report) {
	var op policy.OverridePolicy
	if !decode(obj, &op, "", rep) {
		return
	}
	s := &op.Spec
	checkResourceSelectors(s.ResourceSelectors, "spec.resourceSelectors", namespaced, ns, false, rep)
	for i := range s.OverrideRules {
		rp := idx("spec.overrideRules", i)
		checkAffinity(s.OverrideRules[i].TargetCluster, rp+".targetCluster", rep)
		checkOverriders(&s.OverrideRules[i].Overriders, rp+".overriders", rep)
	}
	if s.TargetCluster != nil || !emptyOverriders(&s.Overriders) {
		p := "spec.overriders"
		if s.TargetCluster != nil {
			p = "spec.targetCluster"
		}
		if len(s.OverrideRules) > 0 {
			rep.warnf(p, "ignored: spec.targetCluster and spec.overriders are not used when overrideRules is set")
		} else {
			rep.warnf(p, "deprecated: use overrideRules")
		}
		checkAffinity(s.TargetCluster, "spec.targetCluster", rep)
		checkOverriders(&s.Overriders, "spec.overriders", rep)
	}
	if spec := mapAt(obj, "spec"); spec != nil {
		defaultSelectorNamespaces(spec, ns, namespaced)
	}
}

func emptyOverriders(o *policy.Overriders) bool {
	return len(o.Plaintext)+len(o.ImageOverrider)+len(o.CommandOverrider)+len(o.ArgsOverrider)+
		len(o.LabelsOverrider)+len(o.AnnotationsOverrider)+len(o.FieldOverrider) == 0
}

var overrideOps = []string{policy.OverriderOpAdd, policy.OverriderOpRemove, policy.OverriderOpReplace}

// checkOperator checks a required operator against its allowed set.
func checkOperator(op, p string, rep *report, allowed ...string) {
	if op == "" {
		rep.required(p)
		return
	}
	rep.enum(p, op, allowed...)
}

// checkPatchValue: add and replace need a value, remove takes none
// (Karmada's webhook rule, so warnings).
func checkPatchValue(op string, hasValue bool, p string, rep *report) {
	switch {
	case (op == policy.OverriderOpAdd || op == policy.OverriderOpReplace) && !hasValue:
		rep.warnf(p, "operator %s needs a value (Karmada's webhook rejects this)", op)
	case op == policy.OverriderOpRemove && hasValue:
		rep.warnf(p, "ignored: operator remove takes no value")
	}
}

func checkJSONPointer(ptr, p string, rep *report) {
	if ptr == "" {
		rep.required(p)
	} else if !strings.HasPrefix(ptr, "/") {
		rep.errorf(p, "invalid value %q: must be a JSON pointer starting with /", ptr)
	}
}

func checkOverriders(o *policy.Overriders, p string, rep *report) {
	for i, po := range o.Plaintext {
		pp := idx(p+".plaintext", i)
		checkJSONPointer(po.Path, pp+".path", rep)
		checkOperator(po.Operator, pp+".operator", rep, overrideOps...)
		checkPatchValue(po.Operator, len(po.Value) > 0, pp+".value", rep)
	}
	for i, io := range o.ImageOverrider {
		ip := idx(p+".imageOverrider", i)
		if io.Component == "" {
			rep.required(ip + ".component")
		}
		rep.enum(ip+".component", io.Component, policy.ImageRegistry, policy.ImageRepository, policy.ImageTag)
		checkOperator(io.Operator, ip+".operator", rep, overrideOps...)
		if io.Predicate != nil {
			checkJSONPointer(io.Predicate.Path, ip+".predicate.path", rep)
		}
	}
	checkCommandArgs(o.CommandOverrider, p+".commandOverrider", rep)
	checkCommandArgs(o.ArgsOverrider, p+".argsOverrider", rep)
	for i, lo := range o.LabelsOverrider {
		lp := idx(p+".labelsOverrider", i)
		checkOperator(lo.Operator, lp+".operator", rep, overrideOps...)
		checkLabels(lo.Value, lp+".value", true, rep)
	}
	for i, ao := range o.AnnotationsOverrider {
		ap := idx(p+".annotationsOverrider", i)
		checkOperator(ao.Operator, ap+".operator", rep, overrideOps...)
		for _, k := range sortedKeys(ao.Value) {
			for _, msg := range kvalidation.IsQualifiedName(strings.ToLower(k)) {
				rep.warnf(ap+".value["+k+"]", "invalid key %q: %s", k, msg)
			}
		}
	}
	for i, fo := range o.FieldOverrider {
		fp := idx(p+".fieldOverrider", i)
		checkJSONPointer(fo.FieldPath, fp+".fieldPath", rep)
		switch {
		case len(fo.JSON) == 0 && len(fo.YAML) == 0:
			rep.errorf(fp, "required value: exactly one of json or yaml")
		case len(fo.JSON) > 0 && len(fo.YAML) > 0:
			rep.errorf(fp+".yaml", "forbidden: may not be set together with json")
		}
		for j, op := range fo.JSON {
			jp := idx(fp+".json", j)
			checkJSONPointer(op.SubPath, jp+".subPath", rep)
			checkOperator(op.Operator, jp+".operator", rep, overrideOps...)
			checkPatchValue(op.Operator, len(op.Value) > 0, jp+".value", rep)
		}
		for j, op := range fo.YAML {
			yp := idx(fp+".yaml", j)
			checkJSONPointer(op.SubPath, yp+".subPath", rep)
			checkOperator(op.Operator, yp+".operator", rep, overrideOps...)
			checkPatchValue(op.Operator, len(op.Value) > 0, yp+".value", rep)
		}
	}
}

func checkCommandArgs(list []policy.CommandArgsOverrider, p string, rep *report) {
	for i, c := range list {
		cp := idx(p, i)
		if c.ContainerName == "" {
			rep.required(cp + ".containerName")
		}
		checkOperator(c.Operator, cp+".operator", rep, policy.OverriderOpAdd, policy.OverriderOpRemove)
	}
}
