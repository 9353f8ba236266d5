package executord

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRetryDelay(t *testing.T) {
	base := 3 * time.Second
	cases := []struct {
		name     string
		failures int
		class    errorClass
		want     time.Duration
	}{
		{"the first failure waits one resync interval", 1, transient, 3 * time.Second},
		{"the second failure waits two", 2, transient, 6 * time.Second},
		{"the third failure waits four", 3, transient, 12 * time.Second},
		{"the fourth failure waits eight", 4, transient, 24 * time.Second},
		{"the wait never exceeds ten resync intervals", 5, transient, 30 * time.Second},
		{"a member down for hours is still tried every ten resync intervals", 500, transient, 30 * time.Second},
		{"a forbidden operation starts at one resync interval too", 1, forbidden, 3 * time.Second},
		{"a forbidden operation keeps doubling past ten resync intervals", 6, forbidden, 96 * time.Second},
		{"a forbidden operation waits at most five minutes", 500, forbidden, 5 * time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := retryDelay(c.failures, base, c.class); got != c.want {
				t.Fatalf("retryDelay(%d, %s) = %s, want %s", c.failures, c.class, got, c.want)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:30001/apis", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"a refused connection says the member does not answer", fmt.Errorf("delete from cluster1: %w", refused), true},
		{"a deadline exceeded says the member does not answer", context.DeadlineExceeded, true},
		{"503 Service Unavailable says the member does not answer", apierrors.NewServiceUnavailable("down"), true},
		{"429 Too Many Requests says the member is too busy for any request", apierrors.NewTooManyRequests("slow down", 1), true},
		{"a server timeout says the member does not answer in time", apierrors.NewServerTimeout(gr, "delete", 1), true},
		{"a conflict is about one object", apierrors.NewConflict(gr, "web", errors.New("changed")), false},
		{"an internal error (a webhook refusing) is about one object", apierrors.NewInternalError(errors.New("webhook")), false},
		{"a kind the member does not serve is about one object", fmt.Errorf("x: %w", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "example.com", Kind: "Widget"}}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := unreachable(c.err); got != c.want {
				t.Fatalf("unreachable(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}
