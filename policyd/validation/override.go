package validation

import (
	"strings"

	"github.com/flotilla-io/flotilla/events/policy"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// checkOverride checks an OverridePolicy or ClusterOverridePolicy: its
// selectors, rules and each overrider.
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
	} else if i := badEscape(ptr); i >= 0 {
		rep.errorf(p, "invalid value %q: ~ at offset %d must be followed by 0 (for ~) or 1 (for /) (RFC 6901)", ptr, i)
	}
}

// badEscape is the offset of the first ~ in ptr not followed by 0 or 1,
// or -1.
func badEscape(ptr string) int {
	for i := 0; i < len(ptr); i++ {
		if ptr[i] == '~' && (i+1 == len(ptr) || ptr[i+1] != '0' && ptr[i+1] != '1') {
			return i
		}
	}
	return -1
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
