package executord

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var deployments = schema.GroupResource{Group: "apps", Resource: "deployments"}

// statusError is an answer of the API server with code and message, as
// client-go decodes it.
func statusError(code int32, reason metav1.StatusReason, msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}}
}

// rbacDenied is the RBAC authorizer's 403 for verb on deployments in ns.
func rbacDenied(verb, ns string) error {
	return apierrors.NewForbidden(deployments, "web",
		fmt.Errorf(`User "system:serviceaccount:flotilla:restricted" cannot %s resource "deployments" in API group "apps" in the namespace %q`, verb, ns))
}

func TestClassify(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:30001/apis", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web",
		field.ErrorList{field.Invalid(field.NewPath("spec", "template", "spec", "containers").Index(0).Child("ports").Index(0).Child("containerPort"), 70000, "must be between 1 and 65535, inclusive")})
	webhook := `admission webhook "policy.example.com" denied the request: images must come from registry.example.com`
	cases := []struct {
		name string
		err  error
		want errorClass
	}{
		{"422 Invalid is final", invalid, final},
		{"422 Invalid wrapped by the worker is final", fmt.Errorf("apply to cluster1: %w", invalid), final},
		{"413 Request Entity Too Large is final", apierrors.NewRequestEntityTooLargeError("limit is 3145728"), final},
		{"400 Bad Request is final", apierrors.NewBadRequest("the object has been modified in an unsupported way"), final},
		{"405 Method Not Allowed is final", apierrors.NewMethodNotSupported(deployments, "patch"), final},
		{"415 Unsupported Media Type (no server-side apply) is final", statusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, "apply patch not supported"), final},
		{"an admission webhook's denial without a code (403) is final", statusError(http.StatusForbidden, "", webhook), final},
		{"an admission webhook's denial with 400 is final", statusError(http.StatusBadRequest, metav1.StatusReasonBadRequest, webhook), final},
		{"an admission webhook's denial with 422 is final", statusError(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, webhook), final},
		{"a ValidatingAdmissionPolicy's denial is final", statusError(http.StatusForbidden, metav1.StatusReasonForbidden,
			`deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'replicas' denied request: too many replicas`), final},
		{"403 from RBAC is forbidden", rbacDenied("patch", "default"), forbidden},
		{"403 from a resource quota is forbidden", apierrors.NewForbidden(deployments, "web", errors.New("exceeded quota: compute, requested: pods=1, used: pods=10, limited: pods=10")), forbidden},
		{"429 Too Many Requests is transient", apierrors.NewTooManyRequests("slow down", 1), transient},
		{"a server timeout is transient", apierrors.NewServerTimeout(deployments, "patch", 1), transient},
		{"504 Gateway Timeout is transient", apierrors.NewTimeoutError("the request timed out", 1), transient},
		{"503 Service Unavailable is transient", apierrors.NewServiceUnavailable("no backend"), transient},
		{"500 Internal Server Error is transient", apierrors.NewInternalError(errors.New("etcdserver: leader changed")), transient},
		{"409 Conflict is transient", apierrors.NewConflict(deployments, "web", errors.New("changed")), transient},
		{"404 Not Found (a namespace deleted meanwhile) is transient", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "web"), transient},
		{"a refused connection is transient", fmt.Errorf("apply to cluster1: %w", refused), transient},
		{"a deadline exceeded is transient", context.DeadlineExceeded, transient},
		{"a kind the member does not serve yet is transient", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "example.com", Kind: "Widget"}}, transient},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := classify(c.err); got != c.want {
				t.Fatalf("classify(%v) = %s, want %s", c.err, got, c.want)
			}
		})
	}
}

func TestForbiddenMessage(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"RBAC in a namespace names the verb, the resource and the namespace", fmt.Errorf("apply to cluster1: %w", rbacDenied("patch", "shop")),
			`Forbidden: the credentials lack patch on deployments.apps in namespace shop; retried until cluster1's admin grants it (user system:serviceaccount:flotilla:restricted)`},
		{"RBAC at the cluster scope says so, and a core resource has no group", apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "shop",
			errors.New(`User "alice" cannot get resource "namespaces" in API group "" at the cluster scope`)),
			`Forbidden: the credentials lack get on namespaces at the cluster scope; retried until cluster1's admin grants it (user alice)`},
		{"any other 403 keeps the member's message", apierrors.NewForbidden(deployments, "web", errors.New("exceeded quota: compute")),
			`Forbidden: deployments.apps "web" is forbidden: exceeded quota: compute; retried until cluster1's admin grants it`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := forbiddenMessage(c.err, "cluster1"); got != c.want {
				t.Fatalf("forbiddenMessage:\n got %s\nwant %s", got, c.want)
			}
		})
	}
}
