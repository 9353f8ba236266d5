package healthd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/events/policy"
)

// errNoEndpoint: the registration has no spec.apiEndpoint to probe.
var errNoEndpoint = errors.New("no spec.apiEndpoint to probe anonymously")

// anonymousProbe probes a member's /readyz without credentials, for a
// cluster healthd holds no usable kubeconfig for. Kubernetes serves /readyz
// to anonymous clients by default (the system:public-info-viewer
// ClusterRole), so the answer tells a silent cluster from a silent
// executord. The server's certificate is verified against roots (the
// system's when nil), never skipped unless the Cluster says
// spec.insecureSkipTLSVerification: an answer healthd cannot verify is
// inconclusive, never Ready. Safe for concurrent use.
type anonymousProbe struct {
	url    string
	client *http.Client
	// judged is the message of a good probe: how the cluster was judged.
	judged string
	// noCredentials is why healthd probes anonymously, for messages.
	noCredentials string
}

// newAnonymousProbe returns the anonymous probe of spec.apiEndpoint, or
// errNoEndpoint, or an error saying what is wrong with the endpoint or
// spec.proxyURL. noCredentials says why healthd has no kubeconfig.
func newAnonymousProbe(spec policy.ClusterSpec, roots *x509.CertPool, noCredentials error) (*anonymousProbe, error) {
	if spec.APIEndpoint == "" {
		return nil, errNoEndpoint
	}
	u, err := url.Parse(spec.APIEndpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("spec.apiEndpoint %q: want an https:// or http:// URL with a host", spec.APIEndpoint)
	}
	tr := &http.Transport{
		Proxy:           http.ProxyFromEnvironment, // as client-go does for a kubeconfig without proxy-url
		TLSClientConfig: &tls.Config{RootCAs: roots, InsecureSkipVerify: spec.InsecureSkipTLSVerification, MinVersion: tls.VersionTLS12},
		// One idle connection is kept, so a probe every interval costs no
		// handshake; a dead member's connection fails the probe anyway.
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     90 * time.Second,
	}
	if spec.ProxyURL != "" {
		pu, err := url.Parse(spec.ProxyURL)
		if err != nil || pu.Host == "" {
			return nil, fmt.Errorf("spec.proxyURL %q: want a URL with a host", spec.ProxyURL)
		}
		tr.Proxy = http.ProxyURL(pu)
		tr.ProxyConnectHeader = http.Header{}
		for k, v := range spec.ProxyHeader {
			tr.ProxyConnectHeader.Set(k, v)
		}
	}
	u = u.JoinPath("readyz")
	p := &anonymousProbe{
		url: u.String(),
		client: &http.Client{Transport: tr,
			// A redirect is not /readyz answering: its status is the answer.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		noCredentials: noCredentials.Error(),
	}
	p.judged = fmt.Sprintf("judged by anonymous GET %s, since healthd holds no credentials for this cluster (%s)", p.url, p.noCredentials)
	switch {
	case u.Scheme == "http":
		p.judged += "; plain HTTP, as spec.apiEndpoint says"
	case spec.InsecureSkipTLSVerification:
		p.judged += "; certificate not verified, as spec.insecureSkipTLSVerification says"
	}
	return p, nil
}

// fetch sends one probe with deadline timeout.
func (p *anonymousProbe) fetch(ctx context.Context, timeout time.Duration) ProbeResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return ProbeResult{Anonymous: true, Message: "anonymous /readyz: " + err.Error()}
	}
	start := time.Now()
	resp, err := p.client.Do(req)
	r := ProbeResult{Anonymous: true, Latency: time.Since(start)}
	var unverified *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unverified):
		r.Reachable, r.Inconclusive = true, ReasonCertificateNotVerified
		r.Message = fmt.Sprintf("anonymous /readyz: the certificate of %s is not verified (%v), so its answer says nothing; "+
			"healthd holds no credentials for this cluster (%s) and verifies it against the system's roots: add the cluster's CA to them "+
			"(SSL_CERT_FILE or SSL_CERT_DIR), or set spec.insecureSkipTLSVerification", req.URL.Host, unverified.Err, p.noCredentials)
		return r
	case err != nil:
		r.Message = "anonymous /readyz: " + err.Error()
		return r
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so the connection can be reused
	r.Reachable = true
	switch resp.StatusCode {
	case http.StatusOK:
		r.OK, r.Message = true, p.judged
	case http.StatusUnauthorized, http.StatusForbidden:
		r.Inconclusive = ReasonAnonymousProbeRefused
		r.Message = fmt.Sprintf("anonymous /readyz: %s, so the answer says nothing about readiness: the API server does not serve /readyz to anonymous clients "+
			"(anonymous auth off, or system:public-info-viewer not bound), and healthd holds no credentials for this cluster (%s)", resp.Status, p.noCredentials)
	default:
		r.Message = strings.TrimSpace(fmt.Sprintf("anonymous /readyz: %s %s", resp.Status, body))
	}
	return r
}
