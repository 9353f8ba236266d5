package healthd

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events/policy"
)

// readyz answers /readyz (under prefix) with status and body, and every
// other path 404; it records whether a request carried credentials.
func readyz(prefix string, status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != prefix+"/readyz":
			http.NotFound(w, r)
		case r.Header.Get("Authorization") != "":
			http.Error(w, "an anonymous probe sends no credentials", http.StatusBadRequest)
		default:
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}
	}
}

// newServer starts h, over TLS with httptest's certificate if overTLS, and
// without logging the handshakes a probe refuses.
func newServer(t *testing.T, overTLS bool, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if overTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

func trusting(srv *httptest.Server) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return pool
}

func TestTheAnonymousProbeTrustsOnlyWhatItCanVerify(t *testing.T) {
	tlsOK := newServer(t, true, readyz("", http.StatusOK, "ok"))
	plain := newServer(t, false, readyz("", http.StatusOK, "ok"))
	prefixed := newServer(t, true, readyz("/k8s/clusters/c1", http.StatusOK, "ok"))
	failing := newServer(t, true, readyz("", http.StatusInternalServerError, "[-]etcd failed: reason withheld\nreadyz check failed"))
	unauthorized := newServer(t, true, readyz("", http.StatusUnauthorized, `{"kind":"Status","code":401}`))
	forbidden := newServer(t, true, readyz("", http.StatusForbidden, `{"kind":"Status","code":403}`))
	redirect := newServer(t, true, http.RedirectHandler("https://elsewhere.example/readyz", http.StatusFound))
	stopped := newServer(t, true, readyz("", http.StatusOK, "ok"))
	stopped.Close()

	cases := []struct {
		name     string
		spec     policy.ClusterSpec
		roots    *x509.CertPool
		want     string // OK/Reachable/Inconclusive
		messages []string
	}{
		{"a TLS endpoint whose certificate the roots verify is a good probe that says how it was judged",
			policy.ClusterSpec{APIEndpoint: tlsOK.URL}, trusting(tlsOK), "ok=true reachable=true inconclusive=",
			[]string{"judged by anonymous GET " + tlsOK.URL + "/readyz", "holds no credentials for this cluster (no kubeconfig)"}},
		{"a certificate the roots do not verify is inconclusive, never Ready, and the message names the cause and the fixes",
			policy.ClusterSpec{APIEndpoint: tlsOK.URL}, x509.NewCertPool(), "ok=false reachable=true inconclusive=CertificateNotVerified",
			[]string{"certificate of " + strings.TrimPrefix(tlsOK.URL, "https://") + " is not verified", "x509:", "spec.insecureSkipTLSVerification", "SSL_CERT_DIR"}},
		{"nor does the system's trust store know a test certificate",
			policy.ClusterSpec{APIEndpoint: tlsOK.URL}, nil, "ok=false reachable=true inconclusive=CertificateNotVerified",
			[]string{"is not verified"}},
		{"spec.insecureSkipTLSVerification skips the verification, and the message says so",
			policy.ClusterSpec{APIEndpoint: tlsOK.URL, InsecureSkipTLSVerification: true}, x509.NewCertPool(), "ok=true reachable=true inconclusive=",
			[]string{"certificate not verified, as spec.insecureSkipTLSVerification says"}},
		{"a plain-HTTP endpoint is probed as the Cluster says",
			policy.ClusterSpec{APIEndpoint: plain.URL}, nil, "ok=true reachable=true inconclusive=",
			[]string{"plain HTTP, as spec.apiEndpoint says"}},
		{"a path in apiEndpoint is kept", policy.ClusterSpec{APIEndpoint: prefixed.URL + "/k8s/clusters/c1/"}, trusting(prefixed), "ok=true reachable=true inconclusive=",
			[]string{prefixed.URL + "/k8s/clusters/c1/readyz"}},
		{"a failing check is answered, not ready", policy.ClusterSpec{APIEndpoint: failing.URL}, trusting(failing), "ok=false reachable=true inconclusive=",
			[]string{"anonymous /readyz: 500 Internal Server Error [-]etcd failed"}},
		{"401 is inconclusive: anonymous auth is off", policy.ClusterSpec{APIEndpoint: unauthorized.URL}, trusting(unauthorized), "ok=false reachable=true inconclusive=AnonymousProbeRefused",
			[]string{"401 Unauthorized", "system:public-info-viewer"}},
		{"403 is inconclusive: the role is not bound", policy.ClusterSpec{APIEndpoint: forbidden.URL}, trusting(forbidden), "ok=false reachable=true inconclusive=AnonymousProbeRefused",
			[]string{"403 Forbidden"}},
		{"a redirect is not followed", policy.ClusterSpec{APIEndpoint: redirect.URL}, trusting(redirect), "ok=false reachable=true inconclusive=",
			[]string{"302 Found"}},
		{"a stopped endpoint gets no answer", policy.ClusterSpec{APIEndpoint: stopped.URL}, trusting(tlsOK), "ok=false reachable=false inconclusive=",
			[]string{"anonymous /readyz: Get", "connection refused"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := newAnonymousProbe(c.spec, c.roots, errors.New("no kubeconfig"))
			if err != nil {
				t.Fatal(err)
			}
			r := p.fetch(context.Background(), 5*time.Second)
			if got := fmt.Sprintf("ok=%t reachable=%t inconclusive=%s", r.OK, r.Reachable, r.Inconclusive); got != c.want || !r.Anonymous {
				t.Fatalf("want %s (anonymous)\ngot  %s (anonymous %t): %s", c.want, got, r.Anonymous, r.Message)
			}
			for _, m := range c.messages {
				if !strings.Contains(r.Message, m) {
					t.Errorf("want %q in the message %q", m, r.Message)
				}
			}
		})
	}
}

func TestAnEndpointHealthdCannotProbeSaysWhy(t *testing.T) {
	cases := []struct {
		name string
		spec policy.ClusterSpec
		want string
	}{
		{"no apiEndpoint", policy.ClusterSpec{}, errNoEndpoint.Error()},
		{"a scheme that is not HTTP", policy.ClusterSpec{APIEndpoint: "tcp://10.0.0.1:6443"}, `spec.apiEndpoint "tcp://10.0.0.1:6443": want an https:// or http:// URL with a host`},
		{"no host", policy.ClusterSpec{APIEndpoint: "https:///readyz"}, "want an https:// or http:// URL with a host"},
		{"a proxy without a host", policy.ClusterSpec{APIEndpoint: "https://10.0.0.1:6443", ProxyURL: "socks5://"}, `spec.proxyURL "socks5://": want a URL with a host`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := newAnonymousProbe(c.spec, nil, errors.New("no kubeconfig"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}
