package render

import (
	// go-digest only accepts the algorithms whose hash is linked in; Karmada
	// links both, so digests using either parse here as they do there.
	_ "crypto/sha256"
	_ "crypto/sha512"
	"fmt"
	"regexp"
	"strings"

	"github.com/distribution/reference"

	"github.com/flotilla-io/flotilla/events/policy"
)

// imageRef is an image reference split the way Karmada's imageparser splits it
// (reference §5.2): registry, repository, and a tag OR a digest.
//
// Parsing uses github.com/distribution/reference.Parse rather than a
// hand-written grammar: it is the same grammar Karmada's imageparser calls
// (distribution/v3/reference is the predecessor of this module), Parse never
// normalises (no docker.io/library/ is added; ParseNormalizedNamed is the
// normalising entry point and is not used), and it gives us the exact error
// cases for free (upper case, name longer than 255, unknown digest algorithm).
// Its own domain/path split is NOT used, because Karmada splits the name
// itself (registry only if the first segment has '.' or ':' or is localhost).
type imageRef struct {
	Registry   string
	Repository string
	Tag        string
	Digest     string
}

var (
	anchoredTag    = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	anchoredDigest = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}$`)
)

// parseImage parses an image reference without Docker Hub normalisation. When
// the reference has both a tag and a digest, the digest is dropped.
func parseImage(s string) (imageRef, error) {
	ref, err := reference.Parse(s)
	if err != nil {
		return imageRef{}, fmt.Errorf("parse image %q: %w", s, err)
	}
	var img imageRef
	if named, ok := ref.(reference.Named); ok {
		img.Registry, img.Repository = splitRegistry(named.Name())
	}
	if tagged, ok := ref.(reference.Tagged); ok {
		img.Tag = tagged.Tag()
	} else if digested, ok := ref.(reference.Digested); ok {
		img.Digest = digested.Digest().String()
	}
	return img, nil
}

// splitRegistry splits a name at its first '/': the head is a registry only
// if it contains '.' or ':' or is "localhost".
func splitRegistry(name string) (registry, repository string) {
	head, rest, ok := strings.Cut(name, "/")
	if !ok || !(strings.ContainsAny(head, ".:") || head == "localhost") {
		return "", name
	}
	return head, rest
}

// String prints the reference: [registry/]repository, then :tag, else
// @digest. Nothing validates the result (an empty repository prints
// "registry/:tag").
func (i imageRef) String() string {
	s := i.Repository
	if i.Registry != "" {
		s = i.Registry + "/" + i.Repository
	}
	if i.Tag != "" {
		return s + ":" + i.Tag
	}
	if i.Digest != "" {
		return s + "@" + i.Digest
	}
	return s
}

// setTagOrDigest sets a valid tag (clearing the digest) or a valid digest
// (clearing the tag); any other value changes nothing.
func (i *imageRef) setTagOrDigest(v string) {
	switch {
	case anchoredTag.MatchString(v):
		i.Tag, i.Digest = v, ""
	case anchoredDigest.MatchString(v):
		i.Digest, i.Tag = v, ""
	}
}

// overrideImage applies one image overrider to an image string.
func overrideImage(image string, o policy.ImageOverrider) (string, error) {
	img, err := parseImage(image)
	if err != nil {
		return "", err
	}
	switch o.Component {
	case policy.ImageRegistry:
		overrideComponent(&img.Registry, o)
	case policy.ImageRepository:
		overrideComponent(&img.Repository, o)
	case policy.ImageTag:
		switch o.Operator {
		case policy.OverriderOpAdd:
			cur := img.Tag
			if cur == "" {
				cur = img.Digest
			}
			img.setTagOrDigest(cur + o.Value)
		case policy.OverriderOpReplace:
			img.setTagOrDigest(o.Value)
		case policy.OverriderOpRemove:
			if img.Tag != "" {
				img.Tag = ""
			} else {
				img.Digest = ""
			}
		}
	}
	return img.String(), nil
}

// overrideComponent applies o's operator to a registry or repository.
func overrideComponent(c *string, o policy.ImageOverrider) {
	switch o.Operator {
	case policy.OverriderOpAdd:
		*c += o.Value
	case policy.OverriderOpReplace:
		*c = o.Value
	case policy.OverriderOpRemove:
		*c = ""
	}
}

// podSpecPath is where the containers of the kinds that the predicate-less
// image, command and args overriders understand live.
func podSpecPath(kind string) ([]string, bool) {
	switch kind {
	case "Pod":
		return []string{"spec"}, true
	case "ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "Job":
		return []string{"spec", "template", "spec"}, true
	}
	return nil, false
}

// containersOf returns the `containers` list of a supported kind (nil when
// the kind is unsupported or the list is absent).
func containersOf(obj map[string]any) ([]any, error) {
	kind, _ := obj["kind"].(string)
	path, ok := podSpecPath(kind)
	if !ok {
		return nil, nil
	}
	cur := obj
	for _, seg := range path {
		v, present := cur[seg]
		if !present || v == nil {
			return nil, nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is not an object", seg)
		}
		cur = m
	}
	v, present := cur["containers"]
	if !present || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("containers is not a list")
	}
	return list, nil
}

func applyImageOverrider(obj map[string]any, o policy.ImageOverrider) error {
	if o.Predicate != nil {
		get, set, err := walkPredicate(obj, o.Predicate.Path)
		if err != nil {
			return err
		}
		s, ok := get.(string)
		if !ok {
			return fmt.Errorf("predicate path %q: value is not a string", o.Predicate.Path)
		}
		out, err := overrideImage(s, o)
		if err != nil {
			return err
		}
		set(out)
		return nil
	}
	return eachContainer(obj, func(i int, cm map[string]any) error {
		// An absent image reads as "" (as in Karmada's typed view) and fails to parse.
		image, _ := cm["image"].(string)
		out, err := overrideImage(image, o)
		if err != nil {
			return fmt.Errorf("containers[%d]: %w", i, err)
		}
		cm["image"] = out
		return nil
	})
}

// eachContainer calls fn with the index and object of every container of
// a supported kind, stopping at the first error.
func eachContainer(obj map[string]any, fn func(i int, c map[string]any) error) error {
	containers, err := containersOf(obj)
	if err != nil {
		return err
	}
	for i, c := range containers {
		cm, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("containers[%d] is not an object", i)
		}
		if err := fn(i, cm); err != nil {
			return err
		}
	}
	return nil
}

// walkPredicate resolves an imageOverrider predicate path: leading and
// trailing '/' trimmed, segments split on '/', numeric segments index lists
// (no JSON-pointer ~ escaping, as Karmada). It returns the value and a setter.
func walkPredicate(obj map[string]any, path string) (any, func(any), error) {
	return walk(obj, strings.Split(strings.Trim(path, "/"), "/"), "predicate path", path, listIndex)
}

// walk follows segs from obj through objects and lists, index turning a
// segment into a position in a list of n or saying why it is not one. It
// returns the value found and a setter for it; errors name the path as
// `label "path"`.
func walk(obj map[string]any, segs []string, label, path string, index func(seg string, n int) (int, error)) (any, func(any), error) {
	var cur any = obj
	for i, seg := range segs {
		last := i == len(segs)-1
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil, nil, fmt.Errorf("%s %q: %q not found", label, path, seg)
			}
			if last {
				return v, func(nv any) { c[seg] = nv }, nil
			}
			cur = v
		case []any:
			idx, err := index(seg, len(c))
			if err != nil {
				return nil, nil, fmt.Errorf("%s %q: %w", label, path, err)
			}
			if last {
				return c[idx], func(nv any) { c[idx] = nv }, nil
			}
			cur = c[idx]
		default:
			return nil, nil, fmt.Errorf("%s %q: %q is not inside an object or list", label, path, seg)
		}
	}
	return nil, nil, fmt.Errorf("%s %q: empty", label, path)
}

func listIndex(seg string, n int) (int, error) {
	idx := 0
	if seg == "" || len(seg) > 9 {
		return 0, fmt.Errorf("%q is not a list index", seg)
	}
	for _, r := range seg {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("%q is not a list index", seg)
		}
		idx = idx*10 + int(r-'0')
	}
	if idx >= n {
		return 0, fmt.Errorf("index %d out of range (length %d)", idx, n)
	}
	return idx, nil
}
