package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/internal/observe"
	"github.com/flotilla-io/flotilla/policyd"
)

func TestDiffShowsWhichSecretValuesChangeButNeverTheValues(t *testing.T) {
	url, bus := eventstest.Server(t)
	d, err := policyd.New(policyd.Config{Instance: "0"}, policyd.Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = d.Run(ctx) }()
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secret := func(password string) string {
		return write("secret.yaml", `apiVersion: v1
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

	creds := write("creds.yaml", `apiVersion: v1
kind: Secret
metadata: {name: c1-kubeconfig, namespace: karmada-system}
stringData: {kubeconfig: TOPSECRET}
`)
	out, errOut, err = runCLI(t, url, "diff", "-f", creds)
	if err != nil || strings.Contains(out+errOut, "TOPSECRET") || !strings.Contains(errOut, "secret/c1-kubeconfig not compared: cluster credentials are sealed") {
		t.Errorf("cluster credentials: want them left out with a warning, got %v\n%s%s", err, out, errOut)
	}
}
