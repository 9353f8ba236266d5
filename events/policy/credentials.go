package policy

import (
	"encoding/json"
	"iter"
	"slices"
	"strings"
)

// CredentialsNamespace holds cluster credentials, as in Karmada: Secrets
// there are never templates, and a Cluster's Secret references default to
// it.
const CredentialsNamespace = "karmada-system"

// CredentialNamespaces are Karmada's namespaces for cluster credentials:
// CredentialsNamespace and karmada-cluster, where karmadactl join puts a
// member's Secret. Every Secret in them is cluster credentials: sealed,
// never a template.
var CredentialNamespaces = []string{CredentialsNamespace, "karmada-cluster"}

// ReservedNamespace reports whether Karmada reserves namespace ns for
// itself and never propagates what it holds: kube-*, karmada-system,
// karmada-cluster and the execution spaces karmada-es-*.
func ReservedNamespace(ns string) bool {
	return slices.Contains(CredentialNamespaces, ns) || strings.HasPrefix(ns, "kube-") || strings.HasPrefix(ns, "karmada-es-")
}

// IsCredentialsSecret reports whether a Secret in namespace ns is cluster
// credentials by where it is (CredentialNamespaces), whatever names it.
func IsCredentialsSecret(apiVersion, kind, ns string) bool {
	return apiVersion == "v1" && kind == "Secret" && slices.Contains(CredentialNamespaces, ns)
}

// SecretKey returns "<namespace>/<name>" of the Secret r names, its
// namespace defaulted to CredentialsNamespace.
func (r LocalSecretRef) SecretKey() string {
	ns := r.Namespace
	if ns == "" {
		ns = CredentialsNamespace
	}
	return ns + "/" + r.Name
}

// CredentialSecrets returns the SecretKey of every Secret the Cluster spec
// references: secretRef (the credentials to reach the member) and
// impersonatorSecretRef (the impersonator's token). Karmada keeps both in
// the control plane and never propagates either.
func (s ClusterSpec) CredentialSecrets() []string {
	var out []string
	for _, ref := range []*LocalSecretRef{s.SecretRef, s.ImpersonatorSecretRef} {
		if ref != nil && ref.Name != "" {
			out = append(out, ref.SecretKey())
		}
	}
	return out
}

// CredentialSecretsIn names, by "<namespace>/<name>", the Secrets among
// objects (decoded manifests about to be applied or simulated together)
// that are cluster credentials: every Secret in CredentialNamespaces and
// every Secret a Cluster among them references (CredentialSecrets). Such
// Secrets are sealed, never propagated.
func CredentialSecretsIn(objects iter.Seq[map[string]any]) map[string]bool {
	out := map[string]bool{}
	for obj := range objects {
		apiVersion, _ := obj["apiVersion"].(string)
		switch kind, _ := obj["kind"].(string); {
		case kind == "Secret":
			md, _ := obj["metadata"].(map[string]any)
			if ns, _ := md["namespace"].(string); IsCredentialsSecret(apiVersion, kind, ns) {
				name, _ := md["name"].(string)
				out[ns+"/"+name] = true
			}
		case kind == KindCluster && apiVersion == ClusterAPIVersion:
			for _, k := range clusterSpecOf(obj).CredentialSecrets() {
				out[k] = true
			}
		}
	}
	return out
}

// clusterSpecOf decodes a Cluster's spec; a spec that does not decode
// (validation rejects it) references nothing.
func clusterSpecOf(obj map[string]any) ClusterSpec {
	var s ClusterSpec
	if b, err := json.Marshal(obj["spec"]); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s
}
