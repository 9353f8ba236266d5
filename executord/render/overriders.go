package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/events/policy"
)

// applyCommandArgsOverrider edits `field` ("command" or "args") of every
// container named o.ContainerName (reference §5.3).
func applyCommandArgsOverrider(obj map[string]any, field string, o policy.CommandArgsOverrider) error {
	return eachContainer(obj, func(i int, cm map[string]any) error {
		if name, _ := cm["name"].(string); name != o.ContainerName {
			return nil
		}
		var old []any
		switch v := cm[field].(type) {
		case nil:
		case []any:
			old = v
		default:
			return fmt.Errorf("containers[%d].%s is not a list", i, field)
		}
		// Absent field: (empty list) op value is added; present: replaced
		// with old op value. Both come down to the same list.
		out := make([]any, 0, len(old)+len(o.Value))
		switch o.Operator {
		case policy.OverriderOpAdd:
			out = append(out, old...)
			for _, v := range o.Value {
				out = append(out, v)
			}
		case policy.OverriderOpRemove:
			for _, v := range old {
				if s, ok := v.(string); ok && slices.Contains(o.Value, s) {
					continue
				}
				out = append(out, v)
			}
		default:
			out = append(out, old...)
		}
		cm[field] = out
		return nil
	})
}

// applyLabelAnnotationOverrider edits metadata.labels or
// metadata.annotations of the object itself (reference §5.4).
func applyLabelAnnotationOverrider(obj map[string]any, field string, o policy.LabelAnnotationOverrider) error {
	meta, err := childMap(obj, "metadata", o.Operator == policy.OverriderOpAdd)
	if err != nil || meta == nil {
		return err
	}
	m, err := childMap(meta, field, o.Operator == policy.OverriderOpAdd)
	if err != nil || m == nil {
		return err
	}
	for k, v := range o.Value {
		switch o.Operator {
		case policy.OverriderOpAdd:
			m[k] = v
		case policy.OverriderOpReplace:
			if _, ok := m[k]; ok {
				m[k] = v
			}
		case policy.OverriderOpRemove:
			delete(m, k)
		}
	}
	return nil
}

// childMap returns obj[key] as a map, creating it when create is set and it is
// absent or null; nil when absent and not created.
func childMap(obj map[string]any, key string, create bool) (map[string]any, error) {
	switch v := obj[key].(type) {
	case map[string]any:
		return v, nil
	case nil:
		if !create {
			return nil, nil
		}
		m := map[string]any{}
		obj[key] = m
		return m, nil
	default:
		return nil, fmt.Errorf("%s is not an object", key)
	}
}

// patchOp is one RFC 6902 operation as Karmada builds it.
type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// applyPatch applies the operations to a JSON document with evanphx
// json-patch v5 default semantics (replace/remove on a missing path fail).
func applyPatch(doc []byte, ops []patchOp) ([]byte, error) {
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, err
	}
	return p.Apply(doc)
}

func plaintextOps(ps []policy.PlaintextOverrider) []patchOp {
	ops := make([]patchOp, len(ps))
	for i, p := range ps {
		ops[i] = patchOp{Op: p.Operator, Path: p.Path, Value: p.Value}
	}
	return ops
}

// applyFieldOverrider rewrites the JSON or YAML document held in the string
// at o.FieldPath (reference §5.6).
func applyFieldOverrider(obj map[string]any, o policy.FieldOverrider) error {
	if len(o.YAML) == 0 && len(o.JSON) == 0 {
		// Validation requires one of them; Karmada itself would blank the field.
		return fmt.Errorf("neither yaml nor json operations are set")
	}
	get, set, err := walkPointer(obj, o.FieldPath)
	if err != nil {
		return err
	}
	s, ok := get.(string)
	if !ok {
		return fmt.Errorf("fieldPath %q: value is not a string", o.FieldPath)
	}
	out, err := overrideDocument(s, o)
	if err != nil {
		return fmt.Errorf("fieldPath %q: %w", o.FieldPath, err)
	}
	set(out)
	return nil
}

// overrideDocument applies a field overrider's operations to the document s:
// the yaml operations when there are any (they win, as in Karmada, should
// both be set), else the json ones.
func overrideDocument(s string, o policy.FieldOverrider) (string, error) {
	if len(o.YAML) > 0 {
		doc, err := yaml.YAMLToJSON([]byte(s))
		if err != nil {
			return "", fmt.Errorf("yaml to json: %w", err)
		}
		ops := make([]patchOp, len(o.YAML))
		for i, y := range o.YAML {
			ops[i] = patchOp{Op: y.Operator, Path: y.SubPath, Value: y.Value}
		}
		patched, err := applyPatch(doc, ops)
		if err != nil {
			return "", err
		}
		out, err := yaml.JSONToYAML(patched)
		if err != nil {
			return "", fmt.Errorf("json to yaml: %w", err)
		}
		return string(out), nil
	}
	ops := make([]patchOp, len(o.JSON))
	for i, j := range o.JSON {
		ops[i] = patchOp{Op: j.Operator, Path: j.SubPath, Value: j.Value}
	}
	patched, err := applyPatch([]byte(s), ops)
	if err != nil {
		return "", err
	}
	return string(patched), nil
}

// walkPointer resolves an RFC 6901 JSON pointer (must start with '/'; ~1 and
// ~0 unescaped; numeric segments index lists). It returns the value found
// and a setter for it.
func walkPointer(obj map[string]any, ptr string) (any, func(any), error) {
	if !strings.HasPrefix(ptr, "/") {
		return nil, nil, fmt.Errorf("fieldPath %q: a JSON pointer must start with '/'", ptr)
	}
	segs := strings.Split(ptr[1:], "/")
	for i, seg := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
	}
	return walk(obj, segs, "fieldPath", ptr, func(seg string, n int) (int, error) {
		idx, err := strconv.Atoi(seg)
		if err != nil || idx < 0 || idx >= n {
			return 0, fmt.Errorf("%q is not an index of a list of %d", seg, n)
		}
		return idx, nil
	})
}
