package sealing

import (
	"bytes"
	"path/filepath"
	"testing"
)

func TestSealedCredentialsOpenOnlyWithTheirKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key.json")
	k, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreate(path)
	if err != nil || again.ID != k.ID {
		t.Fatalf("reloaded key differs: %v", err)
	}
	box, err := Seal(k.Public, []byte("kubeconfig"))
	if err != nil || bytes.Contains(box, []byte("kubeconfig")) {
		t.Fatalf("seal: %v", err)
	}
	plain, err := again.Open(box)
	if err != nil || string(plain) != "kubeconfig" {
		t.Fatalf("open: %q %v", plain, err)
	}
	other, _ := Generate()
	if _, err := other.Open(box); err == nil {
		t.Fatal("another key opened the box")
	}
}

func TestConcurrentFirstStartsAgreeOnOneKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key.json")
	ids := make(chan string, 8)
	for range 8 {
		go func() {
			k, err := LoadOrCreate(path)
			if err != nil {
				ids <- "error: " + err.Error()
				return
			}
			ids <- k.ID
		}()
	}
	first := <-ids
	for range 7 {
		if id := <-ids; id != first {
			t.Fatalf("two processes starting together got different keys: %s and %s", first, id)
		}
	}
}
