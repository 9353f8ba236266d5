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

// TestTheDiffsHunkHeadersCountLinesAsDiffDoes: what diff -u prints for a
// new object, a changed line and a removed object, byte for byte; the
// hunk headers were one line off and a blank context line was added.
func TestTheDiffsHunkHeadersCountLinesAsDiffDoes(t *testing.T) {
	for _, c := range []struct{ before, after, want string }{
		{"", "a: 1\nb: 2\n", "--- accepted/x\n+++ applied/x\n@@ -0,0 +1,2 @@\n+a: 1\n+b: 2\n"},
		{"a: 1\nb: 2\nc: 3\n", "a: 1\nb: 9\nc: 3\n", "--- accepted/x\n+++ applied/x\n@@ -1,3 +1,3 @@\n a: 1\n-b: 2\n+b: 9\n c: 3\n"},
		{"a: 1\n", "", "--- accepted/x\n+++ applied/x\n@@ -1 +0,0 @@\n-a: 1\n"},
		{"a: 1\n", "a: 1\n", ""},
	} {
		got, err := unifiedDiff("x", c.before, c.after)
		if err != nil || got != c.want {
			t.Errorf("diff of %q and %q:\n%q (%v)\nwant\n%q", c.before, c.after, got, err, c.want)
		}
	}
}
