package validation

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/internal/strictyaml"
)

// Document is one object read from a file (or received without one), as it
// will be published: decoded, normalised and defaulted.
type Document struct {
	File  string // as given ("-" for stdin); empty for ValidateObject
	Index int    // 1-based index among the documents of the file
	// Item is the document's 1-based place among the items of the v1 List
	// that is document Index; 0 when it is not a list's item.
	Item int
	Line int // line of the document's first field
	// Object is the document as plain JSON values (map[string]any, []any,
	// string, int64, float64, bool, nil) with seed spellings normalised and
	// defaults applied. Unknown or ill-typed fields (reported as errors) are
	// left out of it.
	Object                            map[string]any
	APIVersion, Kind, Namespace, Name string
	// NamespaceDefaulted: the kind is namespaced and the document names no
	// namespace, so Namespace is "default", or LoadOptions.Namespace.
	NamespaceDefaulted bool
	// Namespaced: the kind is known to be namespaced (false for
	// cluster-scoped kinds and kinds of unknown scope).
	Namespaced bool
}

// Where names the document in messages: "file: document 2", and an item
// of a v1 List by its path in the list, "file: document 2: items[0]".
func (d Document) Where() string {
	w := d.File + ": document " + strconv.Itoa(d.Index)
	if d.Item > 0 {
		w += ": " + itemPath(d.Item)
	}
	return w
}

// Field is the path of one of the document's fields as its problems name
// it: from the list for an item of a v1 List (items[0].kind).
func (d Document) Field(path string) string {
	if d.Item > 0 {
		return joinPath(itemPath(d.Item), path)
	}
	return path
}

// ValidateObject validates one object that arrived without a file (from the
// bus, for instance). Problems carry field paths but no file, document or
// line. It returns the document with defaults applied, the errors and the
// warnings; the object is acceptable when there are no errors.
//
// The object may be changed in place, and the document's Object may be
// the object itself: the caller hands it over.
func ValidateObject(obj map[string]any) (Document, []Problem, []Problem) {
	if doc, rep, ok := validatePlain(obj); ok {
		return doc, rep.errs, rep.warns
	}
	return validateAsTree(obj)
}

// validateAsTree is ValidateObject on a tree converted from obj: every
// object validatePlain does not judge, and the definition it is held to.
func validateAsTree(obj map[string]any) (Document, []Problem, []Problem) {
	root, errs := strictyaml.FromGo(obj)
	doc, rep := validateTree(root, 0, "")
	return doc, append(errs, rep.errs...), rep.warns
}

// validatePlain is validateTree for the common object from the bus: plain
// JSON values, of a built-in kind (every template), whose structure has
// no problem. Its structure is checked on the object itself
// (Checker.CheckPlain) rather than on a tree converted from it, which was
// a third of validation's cost. ok is false for any other object, and for
// a structural problem: validateTree then judges it and names every
// problem in order. The semantic checks are the same ones, in the same
// order (checkSemantics).
func validatePlain(obj map[string]any) (Document, *report, bool) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion == "" || kind == "" {
		return Document{}, nil, false
	}
	info, field, _ := resolveKind(apiVersion, kind)
	if field != "" || info.typ == nil || info.class != classBuiltin {
		return Document{}, nil, false
	}
	rep := newReport(0)
	w := &strictyaml.Checker{Lines: rep.lines, Open: openTypes, Skip: builtinSkip}
	checked, ok := w.CheckPlain(obj, info.typ)
	if !ok {
		return Document{}, nil, false
	}
	doc := Document{APIVersion: apiVersion, Kind: kind}
	doc.Object, _ = checked.(map[string]any)
	checkSemantics(&doc, nil, info, true, "", rep)
	return doc, rep, true
}

// builtinSkip: a built-in kind's status is copied, not checked.
var builtinSkip = map[string]bool{"status": true}

// validateTree runs every check on one document and returns it with its
// report; problems carry field paths and lines but not yet file and index.
func validateTree(root *strictyaml.Node, docLine int, namespace string) (Document, *report) {
	rep := newReport(docLine)
	doc := Document{Line: docLine}
	if root.Kind() != strictyaml.Map {
		rep.errorAt("", docLine, "a document must be an object, got "+root.Describe())
		return doc, rep
	}
	doc.APIVersion = requiredString(root, "apiVersion", rep)
	doc.Kind = requiredString(root, "kind", rep)

	info, resolved := kindInfo{class: classUnknown}, false
	if doc.APIVersion != "" && doc.Kind != "" {
		var field, reason string
		info, field, reason = resolveKind(doc.APIVersion, doc.Kind)
		if field != "" {
			rep.errorAt(field, root.KeyLine(field), reason)
		} else {
			resolved = true
		}
	}

	// Pass 1: structure.
	w := &strictyaml.Checker{Lines: rep.lines, Open: openTypes}
	var obj map[string]any
	if resolved && info.typ != nil {
		if info.class == classBuiltin {
			w.Skip = builtinSkip
		}
		obj, _ = w.Check(root, info.typ, "", root.Line()).(map[string]any)
	} else {
		obj, _ = root.Any().(map[string]any)
		if md := root.Get("metadata"); md != nil {
			if m := w.Check(md, reflect.TypeFor[metav1.ObjectMeta](), "metadata", root.KeyLine("metadata")); m != nil {
				obj["metadata"] = m
			} else {
				delete(obj, "metadata")
			}
		}
	}
	rep.errs = append(rep.errs, w.Problems...)
	if obj == nil {
		obj = map[string]any{}
	}
	doc.Object = obj
	checkSemantics(&doc, root, info, resolved, namespace, rep)
	return doc, rep
}

// checkSemantics is pass 2 of validation, on the document's object after
// its structure was checked: metadata, names, namespace defaults and the
// rules of its kind. root is the tree it came from (nil: none, for a
// built-in kind only); namespace is that of a namespaced object naming
// none ("": default).
func checkSemantics(doc *Document, root *strictyaml.Node, info kindInfo, resolved bool, namespace string, rep *report) {
	obj := doc.Object
	meta := checkMetadata(obj, rep)
	checkName(meta.Name, nameRuleOf(info, doc.APIVersion, doc.Kind), rep)
	doc.Name, doc.Namespace = meta.Name, meta.Namespace
	if resolved {
		doc.Namespaced = info.namespaced
		switch {
		case info.namespaced && meta.Namespace == "":
			doc.Namespace, doc.NamespaceDefaulted = cmp.Or(namespace, "default"), true
			if md, ok := obj["metadata"].(map[string]any); ok {
				md["namespace"] = doc.Namespace
			}
		case !info.namespaced && info.class != classUnknown && meta.Namespace != "":
			rep.warnf("metadata.namespace", "%s is cluster-scoped: the namespace is ignored", doc.Kind)
		}
	}
	if !resolved {
		return
	}
	switch info.class {
	case classPropagation:
		checkPropagation(obj, doc.Namespace, info.namespaced, rep)
	case classOverride:
		checkOverride(obj, doc.Namespace, info.namespaced, rep)
	case classCluster:
		checkCluster(obj, rep)
	case classBinding:
		checkBinding(obj, rep)
	case classQuota:
		checkQuota(obj, doc.Name, rep)
	case classInterpreter:
		checkInterpreter(root, obj, rep)
	case classBuiltin:
		checkBuiltin(obj, doc.APIVersion, doc.Kind, rep)
	}
	checkSize(obj, doc.APIVersion, doc.Kind, rep)
}

// requiredString reads a top-level string field that every object needs.
func requiredString(root *strictyaml.Node, key string, rep *report) string {
	v := root.Get(key)
	switch {
	case v == nil || v.Kind() == strictyaml.Null || (v.Kind() == strictyaml.String && v.Str() == ""):
		rep.errorAt(key, root.KeyLine(key), "required value")
		return ""
	case v.Kind() != strictyaml.String:
		rep.errorAt(key, root.KeyLine(key), "invalid type: expected string, got "+v.Describe())
		return ""
	}
	return v.Str()
}

// checkMetadata checks what the API server checks of every object's
// metadata: a name (its form is its kind's rule: checkName), a namespace
// that is a DNS label, well-formed label and annotation keys and label
// values.
func checkMetadata(obj map[string]any, rep *report) metav1.ObjectMeta {
	var meta metav1.ObjectMeta
	if md, ok := obj["metadata"].(map[string]any); ok {
		// Pass 1 left only fields of ObjectMeta's types: read the ones
		// checked here without a JSON round trip (a fifth of validating
		// a Deployment).
		meta.Name, _ = md["name"].(string)
		meta.Namespace, _ = md["namespace"].(string)
		if _, ok := md["labels"]; ok {
			meta.Labels = stringMap(md["labels"])
		}
		if _, ok := md["annotations"]; ok {
			meta.Annotations = stringMap(md["annotations"])
		}
	} else if md, ok := obj["metadata"]; ok {
		if !decode(md, &meta, "metadata", rep) {
			return meta
		}
	}
	if meta.Name == "" {
		rep.required("metadata.name")
	}
	if meta.Namespace != "" {
		for _, msg := range kvalidation.IsDNS1123Label(meta.Namespace) {
			rep.errorf("metadata.namespace", "invalid value %q: %s", meta.Namespace, msg)
		}
	}
	checkLabels(meta.Labels, "metadata.labels", false, rep)
	for _, k := range sortedKeys(meta.Annotations) {
		for _, msg := range kvalidation.IsQualifiedName(strings.ToLower(k)) {
			rep.errorf("metadata.annotations["+k+"]", "invalid key %q: %s", k, msg)
		}
	}
	return meta
}

// checkLabels checks label keys and values; warn makes the problems
// warnings (for rules only Karmada's webhook enforces).
func checkLabels(labels map[string]string, p string, warn bool, rep *report) {
	report := rep.errorf
	if warn {
		report = rep.warnf
	}
	for _, k := range sortedKeys(labels) {
		fp := p + "[" + k + "]"
		for _, msg := range kvalidation.IsQualifiedName(k) {
			report(fp, "invalid key %q: %s", k, msg)
		}
		for _, msg := range kvalidation.IsValidLabelValue(labels[k]) {
			report(fp, "invalid value %q: %s", labels[k], msg)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// decode converts checked plain values into a typed struct. The structural
// pass has already removed everything that does not fit, so a failure here
// is unexpected; it is reported rather than ignored.
func decode(x any, into any, p string, rep *report) bool {
	data, err := events.MarshalJSON(x)
	if err == nil {
		err = events.UnmarshalJSON(data, into)
	}
	if err != nil {
		rep.errorf(p, "cannot decode: %s", strings.TrimPrefix(err.Error(), "json: "))
		return false
	}
	return true
}

// mapAt walks nested objects by key; nil when any step is missing or not
// an object.
func mapAt(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// listAt returns the objects of a list field, nil entries for non-objects
// (so indices keep matching the typed view).
func listAt(m map[string]any, key string) []map[string]any {
	items, _ := m[key].([]any)
	out := make([]map[string]any, len(items))
	for i, it := range items {
		out[i], _ = it.(map[string]any)
	}
	return out
}

func str(x any) string {
	s, _ := x.(string)
	return s
}

func idx(p string, i int) string { return fmt.Sprintf("%s[%d]", p, i) }
