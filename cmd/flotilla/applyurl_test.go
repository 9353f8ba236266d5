package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestApplyReadsManifestsFromAURL: apply -f https://... reads the
// manifests there, as kubectl does; a URL that does not answer 200 is an
// error naming it and the answer, and nothing is applied.
func TestApplyReadsManifestsFromAURL(t *testing.T) {
	url := busWithPolicyd(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/web.yaml" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config, namespace: shop}\ndata: {a: b}\n"))
	}))
	defer srv.Close()

	out, errOut, err := runCLI(t, url, "apply", "-f", srv.URL+"/web.yaml", "--timeout", "10s")
	if err != nil || !strings.Contains(out, "configmap/web-config created") {
		t.Fatalf("apply -f URL: %v\n%s%s", err, out, errOut)
	}
	_, errOut, err = runCLI(t, url, "apply", "-f", srv.URL+"/nosuch.yaml", "--timeout", "10s")
	if err == nil || !strings.Contains(errOut, srv.URL+"/nosuch.yaml: read: GET answered 404 Not Found") || !strings.Contains(errOut, "nothing was applied") {
		t.Errorf("apply -f a URL answering 404: %v, want an error naming it and the answer:\n%s", err, errOut)
	}
}
