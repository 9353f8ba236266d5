package main

import (
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events/eventstest"
)

func TestDiffShowsWhichSecretValuesChangeButNeverTheValues(t *testing.T) {
	url, bus := eventstest.Server(t)
	t.Cleanup(startPolicyd(t, bus))
	secret := func(password string) string {
		return writeFile(t, "secret.yaml", `apiVersion: v1
kind: Secret
metadata: {name: app, namespace: shop}
data: {user: YWRtaW4=, password: `+password+`}
`)
	}
	if out, errOut, err := runCLI(t, url, "apply", "-f", secret("aHVudGVyMg=="), "--timeout", "10s"); err != nil {
		t.Fatalf("apply: %v\n%s%s", err, out, errOut)
	}

	out, errOut, err := runCLI(t, url, "diff", "-f", secret("aHVudGVyMw=="))
	if err == nil {
		t.Fatalf("a changed Secret: want exit status 1, got success\n%s", out)
	}
	for _, want := range []string{"-  password: '*** (before)'", "+  password: '*** (after)'", "   user: '***'"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff lacks %q:\n%s%s", want, out, errOut)
		}
	}
	for _, value := range []string{"aHVudGVyMg==", "aHVudGVyMw==", "YWRtaW4="} {
		if strings.Contains(out, value) {
			t.Errorf("diff shows the value %s:\n%s", value, out)
		}
	}

	if out, errOut, err := runCLI(t, url, "diff", "-f", secret("aHVudGVyMg==")); err != nil || out != "" {
		t.Errorf("an unchanged Secret: want no diff and success, got %v\n%s%s", err, out, errOut)
	}

	creds := writeFile(t, "creds.yaml", `apiVersion: v1
kind: Secret
metadata: {name: c1-kubeconfig, namespace: karmada-system}
stringData: {kubeconfig: TOPSECRET}
`)
	out, errOut, err = runCLI(t, url, "diff", "-f", creds)
	if err != nil || strings.Contains(out+errOut, "TOPSECRET") || !strings.Contains(errOut, "secret/c1-kubeconfig not compared: cluster credentials are sealed") {
		t.Errorf("cluster credentials: want them left out with a warning, got %v\n%s%s", err, out, errOut)
	}
}
