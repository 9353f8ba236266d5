// Package sealing keeps member-cluster credentials off the bus in plain
// text. The CLI seals a kubeconfig to the public half of the credentials key
// (an anonymous NaCl box: X25519 + XSalsa20-Poly1305, golang.org/x/crypto);
// only daemons holding the private half (healthd and executord) can open it.
package sealing

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/crypto/nacl/box"
)

// Key is a credentials key pair. Private is nil for a public-only key.
type Key struct {
	ID      string    `json:"keyId"`
	Public  *[32]byte `json:"public"`
	Private *[32]byte `json:"private,omitempty"`
}

// Generate makes a new key pair.
func Generate() (*Key, error) {
	pub, priv, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Key{ID: KeyID(pub[:]), Public: pub, Private: priv}, nil
}

// KeyID names a public key: the first 8 bytes of its SHA-256, in hex.
func KeyID(pub []byte) string {
	s := sha256.Sum256(pub)
	return hex.EncodeToString(s[:8])
}

// LoadOrCreate reads the key file at path, creating it (mode 0600) if absent.
func LoadOrCreate(path string) (*Key, error) {
	k, err := Load(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return k, err
	}
	k, err = Generate()
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(k)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// Write a private temp file and link it into place: the link fails if
	// another process (healthd and executord often start together) created
	// the key first, and then everyone uses that one.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".credentials-key-*")
	if err != nil {
		return nil, fmt.Errorf("write credentials key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("write credentials key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return Load(path)
		}
		return nil, fmt.Errorf("write credentials key: %w", err)
	}
	return k, nil
}

// Load reads a key file.
func Load(path string) (*Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var k Key
	if err := json.Unmarshal(b, &k); err != nil || k.Public == nil {
		return nil, fmt.Errorf("credentials key %s: not a key file", path)
	}
	k.ID = KeyID(k.Public[:])
	return &k, nil
}

// Seal encrypts plaintext to the public key pub.
func Seal(pub *[32]byte, plaintext []byte) ([]byte, error) {
	return box.SealAnonymous(nil, plaintext, pub, rand.Reader)
}

// Open decrypts a sealed box with k's private key.
func (k *Key) Open(sealed []byte) ([]byte, error) {
	if k == nil || k.Private == nil {
		return nil, errors.New("no private credentials key: start the daemon with --credentials-key")
	}
	out, ok := box.OpenAnonymous(nil, sealed, k.Public, k.Private)
	if !ok {
		return nil, errors.New("credentials were sealed to another key")
	}
	return out, nil
}
