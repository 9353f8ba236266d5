package mirror

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/readmodel"
)

// fileObject is what `flotilla apply` publishes for document doc of file.
func fileObject(t *testing.T, file string, doc int) map[string]any {
	t.Helper()
	res := validation.Load([]string{file}, nil)
	if len(res.Errors) > 0 {
		t.Fatalf("%s: %v", file, res.Errors)
	}
	obj := res.Docs[doc].Object
	readmodel.StripServerFields(obj)
	return obj
}

// server reads an object as a kube-apiserver returned it (captured from
// the sandbox hub with kubectl get -o json --show-managed-fields).
func server(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// roundTrip gives v the JSON types an event carries.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

const seed = "../../examples/seed000"

func TestInputIsWhatFlotillaApplyPublishesForTheSameFile(t *testing.T) {
	scaled := fileObject(t, filepath.Join(seed, "my-app.yaml"), 0)
	scaled["spec"].(map[string]any)["replicas"] = 12
	scaled["metadata"].(map[string]any)["labels"].(map[string]any)["team"] = "web"
	cases := []struct {
		name   string
		server string
		want   map[string]any
	}{
		{"a Deployment kubectl applied has none of the fields the API server defaulted", "deployment-applied.json", fileObject(t, filepath.Join(seed, "my-app.yaml"), 0)},
		{"a Service kubectl applied has no clusterIP and no defaults", "service-applied.json", fileObject(t, filepath.Join(seed, "my-app.yaml"), 1)},
		{"a PropagationPolicy kubectl applied keeps the seed's staticClusterWeight", "pp-applied.json", fileObject(t, filepath.Join(seed, "propagation-policy.yaml"), 0)},
		{"kubectl scale and kubectl label after kubectl apply are laid over the applied file", "deployment-scaled.json", scaled},
		{"an OverridePolicy applied server-side is what its file says", "op-server-side.json", fileObject(t, filepath.Join(seed, "override-policy.yaml"), 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, skip := Input(server(t, c.server), WatchedNamespaces(nil), nil)
			if skip != "" {
				t.Fatalf("skipped: %s", skip)
			}
			got, problems := Validate(in)
			if len(problems) > 0 {
				t.Fatalf("refused: %v", problems)
			}
			if diff := cmp.Diff(roundTrip(t, c.want), roundTrip(t, got)); diff != "" {
				t.Errorf("published object (-flotilla apply +hubd):\n%s", diff)
			}
		})
	}
}

func TestInputLeavesOutWhatTheHubMakesForItselfAndWhatHubdWrites(t *testing.T) {
	obj := func(apiVersion, kind, ns, name string, extra map[string]any) map[string]any {
		md := map[string]any{"name": name}
		if ns != "" {
			md["namespace"] = ns
		}
		o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
		for k, v := range extra {
			o[k] = v
		}
		return o
	}
	bootstrappedRole := obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "view", nil)
	bootstrappedRole["metadata"].(map[string]any)["labels"] = map[string]any{"kubernetes.io/bootstrapping": "rbac-defaults"}
	mine := obj("cluster.karmada.io/v1alpha1", "Cluster", "", "member1", nil)
	mine["metadata"].(map[string]any)["labels"] = map[string]any{ManagedByLabel: ManagedByHubd}
	cases := []struct {
		name     string
		obj      map[string]any
		wantSkip bool
	}{
		{"the API server's kubernetes Service", obj("v1", "Service", "default", "kubernetes", nil), true},
		{"the root CA ConfigMap of every namespace", obj("v1", "ConfigMap", "team-a", "kube-root-ca.crt", nil), true},
		{"a service account token Secret", obj("v1", "Secret", "default", "sa-token", map[string]any{"type": "kubernetes.io/service-account-token"}), true},
		{"a Cluster hubd wrote for a joined member", mine, true},
		{"a template in kube-system", obj("apps/v1", "Deployment", "kube-system", "coredns", nil), true},
		{"a Secret in karmada-system no Cluster names", obj("v1", "Secret", "karmada-system", "other", nil), true},
		{"a Secret in karmada-cluster no Cluster names", obj("v1", "Secret", "karmada-cluster", "other", nil), true},
		{"a ConfigMap in an execution space", obj("v1", "ConfigMap", "karmada-es-member1", "settings", nil), true},
		{"the karmada-cluster namespace", obj("v1", "Namespace", "", "karmada-cluster", nil), true},
		{"a Node of the hub", obj("v1", "Node", "", "hub-node", nil), true},
		{"a ClusterRole the API server bootstrapped", bootstrappedRole, true},
		{"a system: ClusterRoleBinding", obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "system:basic-user", nil), true},
		{"the default namespace", obj("v1", "Namespace", "", "default", nil), true},
		{"a ClusterRole of the user's", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "app-reader", nil), false},
		{"a Namespace of the user's", obj("v1", "Namespace", "", "team-a", nil), false},
		{"a ConfigMap in a user namespace", obj("v1", "ConfigMap", "team-a", "settings", nil), false},
		{"a ClusterPropagationPolicy", obj("policy.karmada.io/v1alpha1", "ClusterPropagationPolicy", "", "all", nil), false},
		{"a Cluster applied by a user", obj("cluster.karmada.io/v1alpha1", "Cluster", "", "member1", nil), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, skip := Input(c.obj, WatchedNamespaces(nil), nil)
			if got := skip != ""; got != c.wantSkip {
				t.Errorf("skipped = %v (%q), want %v", got, skip, c.wantSkip)
			}
		})
	}
}

func TestInputLeavesOutTheSelectorTheHubGeneratedForAJob(t *testing.T) {
	// Without managedFields hubd reads the whole stored object, with the
	// selector and labels the hub generated.
	whole := func() map[string]any {
		obj := server(t, "job-created.json")
		delete(obj["metadata"].(map[string]any), "managedFields")
		return obj
	}
	stored, manual := whole(), whole()
	manual["spec"].(map[string]any)["manualSelector"] = true
	cases := []struct {
		name         string
		obj          map[string]any
		wantSelector any
		wantLabels   any
	}{
		{"a Job kubectl created: no writer owns the generated selector and labels", server(t, "job-created.json"), nil, nil},
		{"a stored Job read whole: no hub uid in its selector or pod labels, so a member generates its own", stored,
			nil, map[string]any{"batch.kubernetes.io/job-name": "report", "job-name": "report"}},
		{"a Job with manualSelector keeps the selector its writer chose", manual,
			map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": "cc830b63-6cc5-4ea0-b32d-5780c25f9c54"}},
			map[string]any{"batch.kubernetes.io/controller-uid": "cc830b63-6cc5-4ea0-b32d-5780c25f9c54", "batch.kubernetes.io/job-name": "report",
				"controller-uid": "cc830b63-6cc5-4ea0-b32d-5780c25f9c54", "job-name": "report"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, skip := Input(c.obj, WatchedNamespaces(nil), nil)
			if skip != "" {
				t.Fatalf("skipped: %s", skip)
			}
			spec := in["spec"].(map[string]any)
			if diff := cmp.Diff(c.wantSelector, spec["selector"]); diff != "" {
				t.Errorf("spec.selector (-want +got):\n%s", diff)
			}
			tmd, _ := spec["template"].(map[string]any)["metadata"].(map[string]any)
			labels := tmd["labels"]
			if diff := cmp.Diff(c.wantLabels, labels); diff != "" {
				t.Errorf("spec.template.metadata.labels (-want +got):\n%s", diff)
			}
		})
	}
}

// A Secret a Cluster names is credentials wherever it is (karmadactl join
// puts it in karmada-cluster): hubd reads it and publishes it sealed, never
// as a template whose token every member and reader would see.
func TestASecretAClusterNamesIsCredentialsInAnyNamespace(t *testing.T) {
	secret := func(ns, name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"namespace": ns, "name": name},
			"data": map[string]any{"token": "dG9rZW4="}}
	}
	credentials := map[string]bool{"karmada-cluster/member1": true, "team-a/member2": true, "karmada-system/member3": true}
	for _, c := range []struct {
		name   string
		obj    map[string]any
		sealed bool
	}{
		{"named, in karmada-cluster", secret("karmada-cluster", "member1"), true},
		{"named, in a user namespace", secret("team-a", "member2"), true},
		{"named, in karmada-system", secret("karmada-system", "member3"), true},
		{"not named, in a user namespace: a template", secret("team-a", "app"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, watched := range []func(string) bool{WatchedNamespaces(nil), WatchedNamespaces([]string{"apps"})} {
				out, skip := Input(c.obj, watched, credentials)
				if c.sealed && (skip != "" || !IsCredentials(out, credentials)) {
					t.Fatalf("skip %q, credentials %v: want read and sealed", skip, out != nil && IsCredentials(out, credentials))
				}
				if !c.sealed && out != nil && IsCredentials(out, credentials) {
					t.Fatal("sealed a Secret no Cluster names")
				}
			}
		})
	}
	if WatchedNamespaces([]string{"karmada-cluster", "apps"})("karmada-cluster") {
		t.Error("a reserved namespace, listed, is watched; Karmada never propagates from it")
	}
}
