package events

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/validation/path"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// Two objects whose names differ only by "." and "_" (both legal in a
// path-segment name such as a Role's) used to share one subject, so one
// replaced the other's row in every latest-per-subject read.
func TestNamesDifferingByDotAndUnderscoreHaveDistinctSubjects(t *testing.T) {
	dot := ObjectKey{Group: "rbac.authorization.k8s.io", Kind: "Role", Namespace: "default", Name: "coll.a"}
	under := dot
	under.Name = "coll_a"
	if a, b := PlacementSubject(dot), PlacementSubject(under); a == b {
		t.Fatalf("coll.a and coll_a share the subject %s", a)
	}
}

func TestSubjectKeysRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		key     ObjectKey
		subject string
	}{
		{"a namespaced core object", ObjectKey{Kind: "ConfigMap", Namespace: "default", Name: "settings"}, "flotilla.placement.default.core.ConfigMap.settings"},
		{"a cluster-scoped object", ObjectKey{Kind: "Namespace", Name: "team-a"}, "flotilla.placement._.core.Namespace.team-a"},
		{"dots in the group and the name are underscores, as before", ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web.v2"}, "flotilla.placement.shop.apps.Deployment.web_v2"},
		{"an underscore is escaped", ObjectKey{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "coll_a"}, "flotilla.placement._.rbac_authorization_k8s_io.ClusterRole.coll%5Fa"},
		{"wildcards, spaces and percent signs are escaped", ObjectKey{Group: "rbac.authorization.k8s.io", Kind: "Role", Namespace: "ns", Name: "a*b >c%"}, "flotilla.placement.ns.rbac_authorization_k8s_io.Role.a%2Ab%20%3Ec%25"},
		{"a colon stays as it is", ObjectKey{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:controller:x"}, "flotilla.placement._.rbac_authorization_k8s_io.ClusterRole.system:controller:x"},
		{"UTF-8 is escaped byte by byte", ObjectKey{Group: "rbac.authorization.k8s.io", Kind: "Role", Namespace: "ns", Name: "rôle"}, "flotilla.placement.ns.rbac_authorization_k8s_io.Role.r%C3%B4le"},
		{"a group named core differs from the core group", ObjectKey{Group: "core", Kind: "Widget", Namespace: "ns", Name: "w"}, "flotilla.placement.ns.%63ore.Widget.w"},
		{"a name that is a lone dot differs from an empty one", ObjectKey{Kind: "Widget", Namespace: "ns", Name: "."}, "flotilla.placement.ns.core.Widget.%2E"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			subject := PlacementSubject(tc.key)
			if diff := cmp.Diff(tc.subject, subject); diff != "" {
				t.Errorf("subject (-want +got):\n%s", diff)
			}
			got, err := ParseSubjectKey(subject)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.key, got); diff != "" {
				t.Errorf("parsed key (-want +got):\n%s", diff)
			}
		})
	}
}

// legacyToken is the encoding streams were recorded with before "_" was
// escaped: every name made of dots and bytes that stand for themselves
// (every DNS-1123 name among them) must keep that token.
func legacyToken(s string) string {
	if s == "" {
		return "_"
	}
	return strings.NewReplacer(".", "_", " ", "_", "*", "_", ">", "_").Replace(s)
}

// acceptedNames draws names validation accepts: DNS-1123 subdomains (most
// kinds) and path-segment names (Roles and the other RBAC kinds), biased
// towards the bytes an encoding has to escape.
func acceptedNames(r *rand.Rand, n int) []string {
	const dns = "abcdefghijklmnopqrstuvwxyz0123456789-."
	const tricky = "._%*> \t:~!@#$&()+=[]{}|\\'\"<,?é\x00\x7f"
	var out []string
	for len(out) < n {
		var b strings.Builder
		size := 1 + r.IntN(20)
		for range size {
			if r.IntN(3) == 0 {
				b.WriteByte(tricky[r.IntN(len(tricky))])
			} else {
				b.WriteByte(dns[r.IntN(len(dns))])
			}
		}
		s := b.String()
		if len(kvalidation.IsDNS1123Subdomain(s)) == 0 || len(path.IsValidPathSegmentName(s)) == 0 {
			out = append(out, s)
		}
	}
	return out
}

func TestSubjectsOfAcceptedNamesNeverCollide(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 12))
	seen := map[string]ObjectKey{}
	for _, name := range acceptedNames(r, 20000) {
		for _, key := range []ObjectKey{
			{Group: "rbac.authorization.k8s.io", Kind: "Role", Namespace: "default", Name: name},
			{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
			{Kind: "ConfigMap", Namespace: "default", Name: name},
		} {
			subject := ObjectSubject(key)
			if other, ok := seen[subject]; ok && other != key {
				t.Fatalf("%+v and %+v share the subject %s", other, key, subject)
			}
			seen[subject] = key
			got, err := ParseSubjectKey(subject)
			if err != nil || got != key {
				t.Fatalf("%q: %s reads back as %+v (%v)", name, subject, got, err)
			}
			for _, tok := range strings.Split(subject, ".") {
				if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n") {
					t.Fatalf("%q: %s has a token NATS does not allow: %q", name, subject, tok)
				}
			}
		}
		if !strings.ContainsFunc(name, func(r rune) bool { return r != '.' && (r > 0x7f || !literal(byte(r))) }) {
			if diff := cmp.Diff(legacyToken(name), token(name)); diff != "" {
				t.Fatalf("%q: the token changed for a name streams already hold (-old +new):\n%s", name, diff)
			}
		}
	}
}

func TestMalformedEscapesInASubjectAreErrors(t *testing.T) {
	for _, subject := range []string{
		"flotilla.object.default.core.ConfigMap.a%2",
		"flotilla.object.default.core.ConfigMap.a%zz",
		"flotilla.object.default.core.ConfigMap.a%2e",
	} {
		if k, err := ParseSubjectKey(subject); err == nil {
			t.Errorf("%s read as %+v, want an error", subject, k)
		}
	}
}

func FuzzSubjectKeyRoundTrips(f *testing.F) {
	f.Add("default", "apps", "Deployment", "coll.a")
	f.Add("", "", "Namespace", "coll_a")
	f.Add("ns", "core", "Role", "a%2Eb")
	f.Add("_", ".", "*", ">")
	f.Fuzz(func(t *testing.T, ns, group, kind, name string) {
		key := ObjectKey{Namespace: ns, Group: group, Kind: kind, Name: name}
		subject := BindingSubject(key)
		got, err := ParseSubjectKey(subject)
		if err != nil || got != key {
			t.Fatalf("%+v: %s reads back as %+v (%v)", key, subject, got, err)
		}
		if n := strings.Count(subject, "."); n != 5 {
			t.Fatalf("%+v: %s has %d dots, want 5 (six tokens)", key, subject, n)
		}
	})
}
