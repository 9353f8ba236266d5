package validation

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
)

// refusal is the part of a Problem these tests pin: the line, the field
// path and a word of the reason.
type refusal struct {
	Line  int
	Field string
	Says  string // a substring of the reason
}

func refusals(ps []Problem, wants []refusal) []refusal {
	var out []refusal
	if len(ps) > 0 {
		out = make([]refusal, len(ps))
	}
	for i, p := range ps {
		out[i] = refusal{Line: p.Line, Field: p.Field, Says: p.Reason}
		if i < len(wants) && strings.Contains(p.Reason, wants[i].Says) {
			out[i].Says = wants[i].Says
		}
	}
	return out
}

func deploymentWith(replace ...string) string {
	doc := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.25
`
	return strings.NewReplacer(replace...).Replace(doc)
}

func configMapOf(bytes int) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  blob: " + strings.Repeat("x", bytes) + "\n"
}

// What member API servers refuse is refused at apply time, naming the
// line and the field path, so that nothing is published that every member
// would reject.
func TestObjectsAreValidatedAsKubernetesWould(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []refusal
	}{
		{"a valid Deployment is accepted", deploymentWith(), nil},
		{"replicas -1 is refused", deploymentWith("replicas: 3", "replicas: -1"),
			[]refusal{{7, "spec.replicas", "must be greater than or equal to 0"}}},
		{"a name with an underscore and a bang is refused", deploymentWith("name: web\n  namespace", "name: Bad_Name!\n  namespace"),
			[]refusal{{4, "metadata.name", "lowercase RFC 1123 subdomain"}}},
		{"a 300-character name is refused", deploymentWith("name: web\n  namespace", "name: "+strings.Repeat("a", 300)+"\n  namespace"),
			[]refusal{{4, "metadata.name", "must be no more than 253 characters"}}},
		{"a namespace that is not a DNS-1123 label is refused", deploymentWith("namespace: shop", "namespace: shop.eu"),
			[]refusal{{5, "metadata.namespace", "must not contain dots"}}},
		{"a Service name must be a DNS-1035 label", "apiVersion: v1\nkind: Service\nmetadata: {name: 1web}\n",
			[]refusal{{3, "metadata.name", "a DNS-1035 label must"}}},
		{"a Namespace name must be a DNS-1123 label", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team.a}\n",
			[]refusal{{3, "metadata.name", "must not contain dots"}}},
		{"a Role name is a path segment and may hold underscores and colons",
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: 'system:coll_a', namespace: default}\n", nil},
		{"a Role name may not hold a slash",
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: 'a/b', namespace: default}\n",
			[]refusal{{3, "metadata.name", "may not contain '/'"}}},
		{"a custom resource's name is a DNS-1123 subdomain",
			"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: coll_a}\n",
			[]refusal{{3, "metadata.name", "RFC 1123 subdomain"}}},
		{"a CronJob name longer than 52 characters is refused",
			"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: " + strings.Repeat("c", 53) + "}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          containers: [{name: c, image: busybox}]\n",
			[]refusal{{3, "metadata.name", "must be no more than 52 characters"}}},
		{"a Cluster name longer than 48 characters is refused",
			"apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: " + strings.Repeat("m", 49) + "}\nspec: {apiEndpoint: 'https://10.0.0.1:6443'}\n",
			[]refusal{{3, "metadata.name", "must be no more than 48 characters"}}},
		{"a selector that does not match the template's labels is refused", deploymentWith("labels: {app: web}", "labels: {app: api}"),
			[]refusal{{12, "spec.template.metadata.labels", "invalid value {app: api}: spec.selector (app=web) does not match these labels"}}},
		{"an apps/v1 Deployment without a selector is refused", deploymentWith("  selector:\n    matchLabels: {app: web}\n", ""),
			[]refusal{{6, "spec.selector", "required value"}}},
		{"an empty selector is refused", deploymentWith("matchLabels: {app: web}", "matchLabels: {}"),
			[]refusal{{8, "spec.selector", "empty selector"}}},
		{"a container without an image is refused", deploymentWith("        image: nginx:1.25\n", ""),
			[]refusal{{15, "spec.template.spec.containers[0].image", "required value"}}},
		{"a container without a name is refused", deploymentWith("      - name: web\n        image", "      - image"),
			[]refusal{{15, "spec.template.spec.containers[0].name", "required value"}}},
		{"a container name that is not a DNS-1123 label is refused", deploymentWith("- name: web", "- name: Web_1"),
			[]refusal{{15, "spec.template.spec.containers[0].name", "RFC 1123 label"}}},
		{"two containers with one name are refused", deploymentWith("        image: nginx:1.25\n", "        image: nginx:1.25\n      - {name: web, image: busybox}\n"),
			[]refusal{{17, "spec.template.spec.containers[1].name", `duplicate value "web"`}}},
		{"a Deployment without containers is refused", deploymentWith("      containers:\n      - name: web\n        image: nginx:1.25\n", "      containers: []\n"),
			[]refusal{{14, "spec.template.spec.containers", "required value"}}},
		{"a Pod without containers is refused", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n",
			[]refusal{{4, "spec.containers", "required value"}}},
		{"a Job whose pods restart Always is refused",
			"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 2\n  template:\n    spec:\n      restartPolicy: Always\n      containers: [{name: c, image: busybox}]\n",
			[]refusal{{8, "spec.template.spec.restartPolicy", "must be one of OnFailure, Never"}}},
		{"a Job with negative parallelism is refused",
			"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: -2\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: busybox}]\n",
			[]refusal{{5, "spec.parallelism", "must be greater than or equal to 0"}}},
		{"a 5 MB ConfigMap is refused", configMapOf(5 << 20),
			[]refusal{{4, "data", "must have at most 1048576 bytes"}}},
		{"a ConfigMap of exactly 1 MiB is accepted", configMapOf(1 << 20), nil},
		{"a ConfigMap's data and binaryData count together",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\ndata:\n  a: " + strings.Repeat("x", 1<<19) + "\nbinaryData:\n  b: " + base64.StdEncoding.EncodeToString(make([]byte, 1<<19+1)) + "\n",
			[]refusal{{4, "data", "has 1048577"}}},
		{"a Secret over 1 MiB once decoded is refused",
			"apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  k: " + base64.StdEncoding.EncodeToString(make([]byte, 1<<20+1)) + "\n",
			[]refusal{{4, "data", "must have at most 1048576 bytes"}}},
		{"a ConfigMap key with a slash is refused", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a/b: x}\n",
			[]refusal{{4, "data[a/b]", "invalid key"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Load([]string{"-"}, strings.NewReader(tc.src))
			if diff := cmp.Diff(tc.want, refusals(res.Errors, tc.want)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// policyd validates what reaches it from the bus with the same rules, and
// reports the same field paths (without a file or line).
func TestObjectsFromTheBusAreValidatedAlike(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "Bad_Name!", "namespace": "default"},
		"spec": map[string]any{"replicas": -1, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web"}}}}},
	}
	_, errs, _ := ValidateObject(obj)
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	want := []string{"metadata.name", "spec.replicas", "spec.template.spec.containers[0].image"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refused fields (-want +got):\n%s", diff)
	}
}

// Every object travels whole in one NATS message; a larger one would be
// refused by the broker after the user was told it was accepted.
func TestAnObjectLargerThanTheNATSPayloadLimitIsRefused(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "huge"},
		"spec":     map[string]any{"blob": strings.Repeat("x", MaxObjectBytes)},
	}
	_, errs, _ := ValidateObject(obj)
	if len(errs) != 1 || errs[0].Field != "" || !strings.Contains(errs[0].Reason, "NATS payload limit") {
		t.Fatalf("want one refusal of the whole object, got %+v", errs)
	}
	obj["spec"] = map[string]any{"blob": strings.Repeat("x", MaxObjectBytes-200)}
	if _, errs, _ := ValidateObject(obj); len(errs) != 0 {
		t.Fatalf("an object just under the limit: %+v", errs)
	}
}

func TestJSONSizeBoundIsNeverBelowTheEncodedSize(t *testing.T) {
	obj := map[string]any{"a": "x\"\n\u2028<>&", "b": []any{int64(-1 << 62), 1.5e300, true, nil, map[string]any{}}, "c": map[string]any{"\x00": "é"}}
	raw, err := events.MarshalJSON(obj)
	if err != nil {
		t.Fatal(err)
	}
	if bound := jsonSizeBound(obj, 1<<30); bound < len(raw) {
		t.Fatalf("bound %d below the encoded %d bytes: %s", bound, len(raw), raw)
	}
}
