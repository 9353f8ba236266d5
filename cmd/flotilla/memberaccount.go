package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The member account join --create-service-account creates (see
// docs/security.md, "The member account").
const (
	memberAccountNamespace = "flotilla-system"
	memberAccountName      = "flotilla-executor"
	memberAccountSecret    = "flotilla-executor-token"
	memberAccountManager   = "flotilla-join"
)

// defaultMemberResources are the kinds the member account may apply and
// delete when --resources is not given: the workload kinds and what
// propagateDeps carries along with them (ConfigMaps, Secrets,
// ServiceAccounts, PersistentVolumeClaims), as RESOURCE[.GROUP].
var defaultMemberResources = []string{
	"deployments.apps", "statefulsets.apps", "daemonsets.apps", "replicasets.apps",
	"jobs.batch", "cronjobs.batch",
	"services", "configmaps", "secrets", "serviceaccounts", "persistentvolumeclaims",
	"ingresses.networking.k8s.io", "horizontalpodautoscalers.autoscaling", "poddisruptionbudgets.policy",
}

// propagateVerbs are what executord does to a propagated object: get it
// (the managed label, the applied hash, drift, status), server-side apply
// it (patch, and create when it does not exist yet) and delete it.
var propagateVerbs = []string{"get", "create", "patch", "delete"}

// memberRules is the member account's ClusterRole (pure): propagateVerbs
// on each of resources (RESOURCE[.GROUP], as kubectl names them); get and
// create on namespaces (executord creates a template's namespace when the
// member lacks it); list on nodes and pods (healthd's capacity); get on
// the discovery, version and /readyz paths (executord's REST mapper,
// healthd's probe and API enablements), granted here rather than left to
// the member's default system:discovery bindings, which an admin may have
// narrowed.
func memberRules(resources []string) ([]rbacv1.PolicyRule, error) {
	byGroup := map[string][]string{}
	for _, r := range resources {
		r = strings.TrimSpace(r)
		res, group, _ := strings.Cut(r, ".")
		if res == "" || strings.ContainsAny(res, "/* ") {
			return nil, fmt.Errorf("--resources: %q is not RESOURCE[.GROUP] (for example deployments.apps, configmaps)", r)
		}
		if !slices.Contains(byGroup[group], res) {
			byGroup[group] = append(byGroup[group], res)
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	var rules []rbacv1.PolicyRule
	for _, g := range groups {
		res := byGroup[g]
		sort.Strings(res)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: res, Verbs: propagateVerbs})
	}
	return append(rules,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "create"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"list"}},
		rbacv1.PolicyRule{NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/version", "/readyz"}, Verbs: []string{"get"}},
	), nil
}

// isClusterAdmin asks the member whether the kubeconfig's user may do
// every verb on every resource (a SelfSubjectAccessReview for * *).
func isClusterAdmin(ctx context.Context, kube kubernetes.Interface) (bool, error) {
	r, err := kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"}},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

// warnIfClusterAdmin prints a Warning when the kubeconfig join was given
// is cluster-admin in the member. A member it cannot ask (down, or the
// review refused) gets no warning: join does not need the member up.
func warnIfClusterAdmin(ctx context.Context, flat []byte, file string, warn func(string)) {
	rc, err := clientcmd.RESTConfigFromKubeConfig(flat)
	if err != nil {
		return
	}
	rc.Timeout = 5 * time.Second
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return
	}
	if admin, err := isClusterAdmin(ctx, kube); err == nil && admin {
		warn(fmt.Sprintf("%s is cluster-admin in the member: executord and healthd would hold every right there "+
			"(join with --create-service-account to give them a least-privilege account instead)", file))
	}
}

// createMemberAccount creates (or updates: every object is server-side
// applied) the member account with the admin kubeconfig flat: the
// namespace, the ServiceAccount, the ClusterRole of memberRules(resources)
// and its binding, and a kubernetes.io/service-account-token Secret, whose
// token the member's token controller fills in. It returns a kubeconfig
// for the member's server (the same server and CA as flat) that
// authenticates with that token.
func createMemberAccount(ctx context.Context, flat []byte, resources []string, wait time.Duration) ([]byte, error) {
	rules, err := memberRules(resources)
	if err != nil {
		return nil, err
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(flat)
	if err != nil {
		return nil, err
	}
	rc.Timeout = 15 * time.Second
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	opts := metav1.ApplyOptions{FieldManager: memberAccountManager, Force: true}
	labels := map[string]string{"app.kubernetes.io/managed-by": "flotilla"}
	if _, err := kube.CoreV1().Namespaces().Apply(ctx, corev1ac.Namespace(memberAccountNamespace).WithLabels(labels), opts); err != nil {
		return nil, fmt.Errorf("namespace %s: %w", memberAccountNamespace, err)
	}
	sa := corev1ac.ServiceAccount(memberAccountName, memberAccountNamespace).WithLabels(labels)
	if _, err := kube.CoreV1().ServiceAccounts(memberAccountNamespace).Apply(ctx, sa, opts); err != nil {
		return nil, fmt.Errorf("serviceaccount %s/%s: %w", memberAccountNamespace, memberAccountName, err)
	}
	role := rbacv1ac.ClusterRole(memberAccountName).WithLabels(labels)
	for _, r := range rules {
		role.WithRules(rbacv1ac.PolicyRule().WithAPIGroups(r.APIGroups...).WithResources(r.Resources...).
			WithNonResourceURLs(r.NonResourceURLs...).WithVerbs(r.Verbs...))
	}
	if _, err := kube.RbacV1().ClusterRoles().Apply(ctx, role, opts); err != nil {
		return nil, fmt.Errorf("clusterrole %s: %w", memberAccountName, err)
	}
	binding := rbacv1ac.ClusterRoleBinding(memberAccountName).WithLabels(labels).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(memberAccountName)).
		WithSubjects(rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(memberAccountName).WithNamespace(memberAccountNamespace))
	if _, err := kube.RbacV1().ClusterRoleBindings().Apply(ctx, binding, opts); err != nil {
		return nil, fmt.Errorf("clusterrolebinding %s: %w", memberAccountName, err)
	}
	secret := corev1ac.Secret(memberAccountSecret, memberAccountNamespace).WithLabels(labels).
		WithAnnotations(map[string]string{corev1.ServiceAccountNameKey: memberAccountName}).
		WithType(corev1.SecretTypeServiceAccountToken)
	if _, err := kube.CoreV1().Secrets(memberAccountNamespace).Apply(ctx, secret, opts); err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", memberAccountNamespace, memberAccountSecret, err)
	}
	token, err := waitToken(ctx, kube, wait)
	if err != nil {
		return nil, err
	}
	return tokenKubeconfig(flat, token)
}

// waitToken waits until the member's token controller has put a token in
// the account's Secret.
func waitToken(ctx context.Context, kube kubernetes.Interface, wait time.Duration) (string, error) {
	deadline := time.Now().Add(wait)
	for {
		s, err := kube.CoreV1().Secrets(memberAccountNamespace).Get(ctx, memberAccountSecret, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("secret %s/%s: %w", memberAccountNamespace, memberAccountSecret, err)
		}
		if t := s.Data[corev1.ServiceAccountTokenKey]; len(t) > 0 {
			return string(t), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("secret %s/%s has no token after %s: the member's token controller (kube-controller-manager) did not fill it in",
				memberAccountNamespace, memberAccountSecret, wait)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tokenKubeconfig is a kubeconfig for the current context's cluster of
// flat (server, CA, TLS settings as given) whose user is the member
// account with token (pure).
func tokenKubeconfig(flat []byte, token string) ([]byte, error) {
	cfg, err := clientcmd.Load(flat)
	if err != nil {
		return nil, err
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, errors.New("the kubeconfig has no current context")
	}
	cl, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("the kubeconfig's current context names cluster %q, which it does not define", ctx.Cluster)
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[ctx.Cluster] = cl
	out.AuthInfos[memberAccountName] = &clientcmdapi.AuthInfo{Token: token}
	out.Contexts[memberAccountName] = &clientcmdapi.Context{Cluster: ctx.Cluster, AuthInfo: memberAccountName}
	out.CurrentContext = memberAccountName
	return clientcmd.Write(*out)
}
