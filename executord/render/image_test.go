package render

import (
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
)

const hex64 = "50d858e0985ecc7f60418aaf0cc5ab587f42c2570a884095a9e8ccacd0f6545c"

func TestParseImage(t *testing.T) {
	tests := []struct {
		name  string
		image string
		want  imageRef
		print string // "" = the input
	}{
		{"a registry with a port is split off at the first slash",
			"fictional.registry.example:10443/subpath/imagename:v1.0.0",
			imageRef{Registry: "fictional.registry.example:10443", Repository: "subpath/imagename", Tag: "v1.0.0"}, ""},
		{"an IP registry with a port is a registry",
			"10.10.10.10:10443/subpath/imagename",
			imageRef{Registry: "10.10.10.10:10443", Repository: "subpath/imagename"}, ""},
		{"a first segment without dot colon or localhost is part of the repository",
			"subpath/imagename:v1.0.0",
			imageRef{Repository: "subpath/imagename", Tag: "v1.0.0"}, ""},
		{"registry.k8s.io is a registry",
			"registry.k8s.io/nginx:1.19",
			imageRef{Registry: "registry.k8s.io", Repository: "nginx", Tag: "1.19"}, ""},
		{"localhost with a port is a registry",
			"localhost:5000/a/b:tag",
			imageRef{Registry: "localhost:5000", Repository: "a/b", Tag: "tag"}, ""},
		{"bare localhost is a registry",
			"localhost/a",
			imageRef{Registry: "localhost", Repository: "a"}, ""},
		{"a bare name is not normalised to docker.io",
			"nginx",
			imageRef{Repository: "nginx"}, ""},
		{"a digest without a tag is kept",
			"nginx@sha256:" + hex64,
			imageRef{Repository: "nginx", Digest: "sha256:" + hex64}, ""},
		{"a tag wins and the digest is dropped",
			"nginx:1.19@sha256:" + hex64,
			imageRef{Repository: "nginx", Tag: "1.19"}, "nginx:1.19"},
		{"what Registry replace fake produces reads back as a repository",
			"fake/nginx:1.19.0",
			imageRef{Repository: "fake/nginx", Tag: "1.19.0"}, ""},
		{"docker.io is kept as written",
			"docker.io/library/nginx:1.25.3",
			imageRef{Registry: "docker.io", Repository: "library/nginx", Tag: "1.25.3"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseImage(tc.image)
			if err != nil {
				t.Fatalf("parseImage(%q): %v", tc.image, err)
			}
			if got != tc.want {
				t.Fatalf("parseImage(%q) = %+v, want %+v", tc.image, got, tc.want)
			}
			want := tc.print
			if want == "" {
				want = tc.image
			}
			if got.String() != want {
				t.Fatalf("String() = %q, want %q", got.String(), want)
			}
		})
	}
}

func TestParseImageRejectsInvalidReferences(t *testing.T) {
	for _, image := range []string{"", "NGINX", "registry.example/Upper/case:1", "nginx:", "nginx@sha256:abc", "nginx@md5:" + hex64[:32] + "x", "-bad"} {
		if got, err := parseImage(image); err == nil {
			t.Errorf("parseImage(%q) = %+v, want an error", image, got)
		}
	}
}

func TestOverrideImage(t *testing.T) {
	const fict = "fictional.registry.example/imagename:v1.0.0"
	tests := []struct {
		name      string
		image     string
		component string
		operator  string
		value     string
		want      string
	}{
		{"Registry add to an image without registry concatenates onto the empty registry",
			"perl:5.34.0", "Registry", "add", "registry.k8s.io", "registry.k8s.io/perl:5.34.0"},
		{"Registry add is plain concatenation without separator",
			fict, "Registry", "add", ".test", "fictional.registry.example.test/imagename:v1.0.0"},
		{"Repository remove leaves an empty repository printed as registry slash colon tag",
			fict, "Repository", "remove", "", "fictional.registry.example/:v1.0.0"},
		{"Tag add of a digest makes an invalid tag and changes nothing",
			fict, "Tag", "add", "sha256:" + hex64, fict},
		{"Tag replace with a digest sets the digest and clears the tag",
			fict, "Tag", "replace", "sha256:" + hex64, "fictional.registry.example/imagename@sha256:" + hex64},
		{"Registry replace on an image without registry prefixes the registry",
			"nginx:1.25.3", "Registry", "replace", "registry.beijing.example.com", "registry.beijing.example.com/nginx:1.25.3"},
		{"Registry replace swaps an existing registry",
			"registry.k8s.io/nginx:1.19", "Registry", "replace", "my.registry:5000", "my.registry:5000/nginx:1.19"},
		{"Registry remove drops the registry",
			"registry.k8s.io/nginx:1.19", "Registry", "remove", "ignored", "nginx:1.19"},
		{"Registry replace fake produces something read back as a repository",
			"nginx:1.19.0", "Registry", "replace", "fake", "fake/nginx:1.19.0"},
		{"Repository add appends to the repository",
			"registry.k8s.io/nginx:1.19", "Repository", "add", "-slim", "registry.k8s.io/nginx-slim:1.19"},
		{"Repository replace swaps the repository",
			"registry.k8s.io/nginx:1.19", "Repository", "replace", "team/web", "registry.k8s.io/team/web:1.19"},
		{"Tag add appends to the tag",
			"nginx:1.19", "Tag", "add", "-alpine", "nginx:1.19-alpine"},
		{"Tag add to an image without tag or digest sets the value as tag",
			"nginx", "Tag", "add", "1.25", "nginx:1.25"},
		{"Tag add to a digest-only image that stays a valid digest replaces the digest",
			"nginx@sha256:" + hex64, "Tag", "add", "ab", "nginx@sha256:" + hex64 + "ab"},
		{"Tag replace with a valid tag sets it",
			"nginx:1.19", "Tag", "replace", "1.25.3", "nginx:1.25.3"},
		{"Tag replace with a valid tag clears a digest",
			"nginx@sha256:" + hex64, "Tag", "replace", "1.25.3", "nginx:1.25.3"},
		{"Tag replace with an invalid value changes nothing",
			"nginx:1.19", "Tag", "replace", "not a tag", "nginx:1.19"},
		{"Tag replace with a too long value changes nothing",
			"nginx:1.19", "Tag", "replace", strings.Repeat("a", 129), "nginx:1.19"},
		{"Tag remove clears the tag",
			"nginx:1.19", "Tag", "remove", "", "nginx"},
		{"Tag remove clears a digest when there is no tag",
			"nginx@sha256:" + hex64, "Tag", "remove", "", "nginx"},
		{"any override of a tag plus digest image drops the digest",
			"nginx:1.19@sha256:" + hex64, "Registry", "add", "r.io", "r.io/nginx:1.19"},
		{"an unknown operator reprints the image",
			"nginx:1.19@sha256:" + hex64, "Registry", "bogus", "r.io", "nginx:1.19"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := overrideImage(tc.image, policy.ImageOverrider{Component: tc.component, Operator: tc.operator, Value: tc.value})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOverrideImageRejectsUnparsableImage(t *testing.T) {
	if _, err := overrideImage("Upper/Case", policy.ImageOverrider{Component: "Registry", Operator: "add", Value: "x.io"}); err == nil {
		t.Fatal("want an error for an upper-case repository")
	}
}

func TestSequentialImageOverridersReparseEachOutput(t *testing.T) {
	img := "nginx:1.19.0"
	for _, o := range []policy.ImageOverrider{
		{Component: "Registry", Operator: "replace", Value: "fake"},  // fake/nginx:1.19.0, read back with no registry
		{Component: "Registry", Operator: "replace", Value: "x.io"},  // so this prefixes: x.io/fake/nginx
		{Component: "Repository", Operator: "replace", Value: "web"}, // x.io/web
	} {
		var err error
		if img, err = overrideImage(img, o); err != nil {
			t.Fatal(err)
		}
	}
	if img != "x.io/web:1.19.0" {
		t.Fatalf("got %q", img)
	}
}
