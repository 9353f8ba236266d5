package executord

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// errorClass is what a member's error means for the operation that met it.
type errorClass int

const (
	// transient: the member may take it later (no answer, a timeout, 429,
	// 5xx, a conflict, a kind it does not serve yet): held and retried with
	// backoff (at most 10 resync intervals apart).
	transient errorClass = iota
	// forbidden: the member refused Flotilla's credentials (RBAC, a quota,
	// 403). Its admin can fix that, so it is held and retried, with a long
	// backoff (at most forbiddenRetryCap apart).
	forbidden
	// final: the member refused the manifest itself (422 Invalid, 413 too
	// large, 400, 405, 415, an admission webhook's or admission policy's
	// denial). The same manifest would be refused again: the apply ends as
	// Failed and is not retried (events.WorkReasonRefused).
	final
)

func (c errorClass) String() string {
	switch c {
	case forbidden:
		return "forbidden"
	case final:
		return "final"
	}
	return "transient"
}

// forbiddenRetryCap bounds the backoff of a forbidden operation: an admin
// who grants the rights sees them used within this long.
const forbiddenRetryCap = 5 * time.Minute

// classify says which class a member's error is (pure). An admission
// webhook's denial comes with whatever code the webhook chose (403 when it
// chose none), so it is recognised by its message before the codes are.
// Anything that is not an answer of the API server (a network error, a
// context deadline, a kind discovery does not know yet) is transient.
func classify(err error) errorClass {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return transient
	}
	switch {
	case admissionDenied(err),
		apierrors.IsInvalid(err),
		apierrors.IsRequestEntityTooLargeError(err),
		apierrors.IsBadRequest(err),
		apierrors.IsMethodNotSupported(err),
		apierrors.IsUnsupportedMediaType(err):
		return final
	case apierrors.IsForbidden(err):
		return forbidden
	}
	return transient
}

// admissionDenied: an admission webhook ("admission webhook "x" denied the
// request: ...") or a ValidatingAdmissionPolicy ("ValidatingAdmissionPolicy
// 'x' with binding 'y' denied request: ...") refused the object.
func admissionDenied(err error) bool {
	msg := err.Error()
	return (strings.Contains(msg, "admission webhook") && strings.Contains(msg, "denied the request")) ||
		(strings.Contains(msg, "ValidatingAdmissionPolicy") && strings.Contains(msg, "denied request"))
}

// rbacDenial matches the reason the RBAC authorizer gives: `User "u"
// cannot get resource "deployments" in API group "apps" in the namespace
// "ns"` (or `at the cluster scope`).
var rbacDenial = regexp.MustCompile(`User "([^"]*)" cannot (\S+) resource "([^"]*)" in API group "([^"]*)"(?: in the namespace "([^"]*)")?`)

// forbiddenMessage is the work status message of a forbidden request to
// cluster (pure): which verb on which resource in which namespace the
// credentials lack when RBAC refused it, else the member's own message.
func forbiddenMessage(err error, cluster string) string {
	retried := fmt.Sprintf("retried until %s's admin grants it", cluster)
	m := rbacDenial.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Sprintf("Forbidden: %v; %s", err, retried)
	}
	user, verb, resource, group, ns := m[1], m[2], m[3], m[4], m[5]
	if group != "" {
		resource += "." + group
	}
	where := "at the cluster scope"
	if ns != "" {
		where = "in namespace " + ns
	}
	return fmt.Sprintf("Forbidden: the credentials lack %s on %s %s; %s (user %s)", verb, resource, where, retried, user)
}
