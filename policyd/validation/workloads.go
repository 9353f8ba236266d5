package validation

import (
	"fmt"
	"github.com/flotilla-io/flotilla/internal/strictyaml"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// workload says where a built-in workload kind keeps what the rules below
// look at; empty paths are fields the kind does not have.
type workload struct {
	replicas []string // non-negative counts (spec.replicas, spec.parallelism...)
	selector string   // the label selector that must match the template
	// selectorRequired: the API version refuses an object without one
	// (apps/v1 and apps/v1beta2); older versions default it from the
	// template's labels.
	selectorRequired bool
	// mapSelector: a plain label map (ReplicationController), not a
	// LabelSelector.
	mapSelector bool
	template    string // the pod template ("" for a Pod itself)
	podSpec     string // the pod spec
	// jobTemplate: the pod's restartPolicy must be OnFailure or Never.
	jobTemplate bool
	// restartsAlways: a long-running workload, whose pods' restartPolicy
	// can only be Always.
	restartsAlways bool
	schedule       string // a required cron schedule (CronJob)
}

// workloadOf returns the rules of a built-in workload kind, and false for
// every other kind.
func workloadOf(apiVersion, kind string) (workload, bool) {
	group, version, found := strings.Cut(apiVersion, "/")
	if !found {
		group, version = "", apiVersion
	}
	appsSelector := group == "apps" && (version == "v1" || version == "v1beta2")
	switch {
	case (group == "apps" || group == "extensions") && (kind == "Deployment" || kind == "ReplicaSet" || kind == "StatefulSet"):
		return workload{replicas: []string{"spec.replicas"}, selector: "spec.selector", selectorRequired: appsSelector,
			template: "spec.template", podSpec: "spec.template.spec", restartsAlways: true}, true
	case (group == "apps" || group == "extensions") && kind == "DaemonSet":
		return workload{selector: "spec.selector", selectorRequired: appsSelector, template: "spec.template", podSpec: "spec.template.spec", restartsAlways: true}, true
	case group == "batch" && kind == "Job":
		return workload{replicas: []string{"spec.parallelism", "spec.completions"}, selector: "spec.selector",
			template: "spec.template", podSpec: "spec.template.spec", jobTemplate: true}, true
	case group == "batch" && kind == "CronJob":
		p := "spec.jobTemplate.spec"
		return workload{replicas: []string{p + ".parallelism", p + ".completions"}, selector: p + ".selector",
			template: p + ".template", podSpec: p + ".template.spec", jobTemplate: true, schedule: "spec.schedule"}, true
	case group == "" && kind == "ReplicationController":
		return workload{replicas: []string{"spec.replicas"}, selector: "spec.selector", mapSelector: true,
			template: "spec.template", podSpec: "spec.template.spec", restartsAlways: true}, true
	case group == "" && kind == "PodTemplate":
		return workload{template: "template", podSpec: "template.spec"}, true
	case group == "" && kind == "Pod":
		return workload{podSpec: "spec"}, true
	}
	return workload{}, false
}

// checkBuiltin applies the rules member API servers enforce on the
// built-in workload kinds that a user is likely to hit: replica counts
// that are not negative, a selector (where one is required) that matches
// the pod template's labels, a cron schedule, and containers that each
// have a unique DNS-1123 label as name and an image. The structural pass
// has already checked every field's type.
func checkBuiltin(obj map[string]any, apiVersion, kind string, rep *report) {
	if apiVersion == "v1" && kind == "Service" {
		checkService(obj, rep)
		return
	}
	w, ok := workloadOf(apiVersion, kind)
	if !ok {
		return
	}
	for _, p := range w.replicas {
		if n, ok := intAt(obj, p); ok && n < 0 {
			rep.errorf(p, "invalid value %d: must be greater than or equal to 0", n)
		}
	}
	if w.schedule != "" && str(at(obj, w.schedule)) == "" {
		rep.required(w.schedule)
	}
	if w.selector != "" {
		checkTemplateSelector(obj, w, rep)
	}
	if spec, ok := at(obj, w.podSpec).(map[string]any); ok {
		checkPodSpec(spec, w.podSpec, w.jobTemplate, rep)
		if w.restartsAlways {
			checkLongRunningRestartPolicy(spec, w.podSpec, rep)
		}
	} else {
		rep.required(w.podSpec + ".containers")
	}
}

// checkTemplateSelector checks that the selector exists where the API
// version requires one, is not empty, and selects the template's pods.
func checkTemplateSelector(obj map[string]any, w workload, rep *report) {
	raw, present := at(obj, w.selector).(map[string]any)
	tmplLabels := stringMap(at(obj, w.template+".metadata.labels"))
	var sel labels.Selector
	switch {
	case !present && w.selectorRequired:
		rep.required(w.selector)
		return
	case !present:
		return // defaulted from the template's labels
	case w.mapSelector:
		if len(raw) == 0 {
			return // defaulted from the template's labels
		}
		m := stringMap(raw)
		checkLabels(m, w.selector, false, rep)
		sel = labels.SelectorFromSet(m)
	default:
		var ls metav1.LabelSelector
		if ml, ok := raw["matchLabels"].(map[string]any); ok && len(raw) == 1 {
			ls.MatchLabels = stringMap(ml) // the common case, without a JSON round trip
		} else if !decode(raw, &ls, w.selector, rep) {
			return
		}
		before := len(rep.errs)
		checkLabelSelector(&ls, w.selector, rep)
		if len(rep.errs) > before {
			return
		}
		if len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0 {
			rep.errorf(w.selector, "invalid value: an empty selector selects every pod")
			return
		}
		if len(ls.MatchExpressions) == 0 {
			// matchLabels only, the common case: the labels must be a
			// subset of the template's, the selector is built only to
			// name it in the error.
			if subset(ls.MatchLabels, tmplLabels) {
				return
			}
			sel = labels.SelectorFromSet(ls.MatchLabels)
			break
		}
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(&ls); err != nil {
			return // checkLabelSelector reported it
		}
	}
	if !sel.Matches(labels.Set(tmplLabels)) {
		rep.errorf(w.template+".metadata.labels", "invalid value %s: %s (%s) does not match these labels", formatLabels(tmplLabels), w.selector, sel)
	}
}

// checkPodSpec checks the containers of a pod spec at p.
func checkPodSpec(spec map[string]any, p string, job bool, rep *report) {
	containers := listAt(spec, "containers")
	if len(containers) == 0 {
		rep.required(p + ".containers")
	}
	seen := map[string]bool{}
	for _, list := range []string{"initContainers", "containers"} {
		for i, c := range listAt(spec, list) {
			cp := idx(p+"."+list, i)
			if c == nil {
				continue // the structural pass reported it
			}
			name := str(c["name"])
			switch {
			case name == "":
				rep.required(cp + ".name")
			case seen[name]:
				rep.errorf(cp+".name", "duplicate value %q: container names must be unique in a pod", name)
			default:
				for _, msg := range kvalidation.IsDNS1123Label(name) {
					rep.errorf(cp+".name", "invalid value %q: %s", strictyaml.Truncate(name), msg)
				}
			}
			seen[name] = true
			if strings.TrimSpace(str(c["image"])) == "" {
				rep.required(cp + ".image")
			}
			checkContainerPorts(c, cp, rep)
		}
	}
	if job {
		switch rp := str(spec["restartPolicy"]); rp {
		case "OnFailure", "Never":
		case "":
			rep.errorf(p+".restartPolicy", "required value: a Job's pods must have restartPolicy OnFailure or Never")
		default:
			rep.errorf(p+".restartPolicy", "unsupported value %q: must be one of OnFailure, Never", rp)
		}
	}
}

// at walks a dotted path of object keys; nil when a step is missing.
func at(m map[string]any, p string) any {
	var x any = m
	for more := true; more; {
		var k string
		k, p, more = strings.Cut(p, ".")
		mm, ok := x.(map[string]any)
		if !ok {
			return nil
		}
		x = mm[k]
	}
	return x
}

// intAt reads an integer field; the structural pass leaves integers as
// int64 (float64 and int are accepted for objects built in Go).
func intAt(m map[string]any, p string) (int64, bool) {
	switch n := at(m, p).(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}

// subset reports whether every label of sel is in labels with its value.
func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func stringMap(x any) map[string]string {
	m, _ := x.(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = str(v)
	}
	return out
}

// formatLabels renders labels in key order, as {app: web, tier: front}.
func formatLabels(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+": "+m[k])
	}
	return fmt.Sprintf("{%s}", strings.Join(parts, ", "))
}
