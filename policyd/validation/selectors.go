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

// checkResourceSelectors checks which objects a propagation or override
// policy selects; the selector, affinity and toleration checks below are
// shared by both kinds of policy.
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
