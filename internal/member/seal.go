package member

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/flotilla/events/sealing"
)

// SecretValues are the values of a Secret object (its data, base64, and
// its stringData), by key, as the CLI's apply and hubd read them before
// sealing.
func SecretValues(obj map[string]any) (map[string][]byte, error) {
	values := map[string][]byte{}
	if data, ok := obj["data"].(map[string]any); ok {
		for k, v := range data {
			str, _ := v.(string)
			b, err := base64.StdEncoding.DecodeString(str)
			if err != nil {
				return nil, fmt.Errorf("data.%s: not base64: %w", k, err)
			}
			values[k] = b
		}
	}
	if data, ok := obj["stringData"].(map[string]any); ok {
		for k, v := range data {
			str, _ := v.(string)
			values[k] = []byte(str)
		}
	}
	return values, nil
}

// SealValues seals every value of a credentials Secret to key. A value
// that is a kubeconfig is flattened first (FlattenKubeconfig, relative
// paths against base), so the sealed kubeconfig stands alone.
func SealValues(values map[string][]byte, key *sealing.Key, base string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(values))
	for k, v := range values {
		if flat, err := FlattenKubeconfig(v, base); err == nil {
			v = flat
		}
		sealed, err := sealing.Seal(key.Public, v)
		if err != nil {
			return nil, err
		}
		out[k] = sealed
	}
	return out, nil
}

// FlattenKubeconfig resolves relative paths against base, embeds the
// files a kubeconfig references and keeps only its current context.
func FlattenKubeconfig(raw []byte, base string) ([]byte, error) {
	cfg, err := clientcmd.Load(raw)
	if err != nil || len(cfg.Clusters) == 0 {
		return nil, errors.New("not a kubeconfig")
	}
	for _, c := range cfg.Clusters {
		c.LocationOfOrigin = filepath.Join(base, "kubeconfig")
	}
	for _, a := range cfg.AuthInfos {
		a.LocationOfOrigin = filepath.Join(base, "kubeconfig")
	}
	if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
		return nil, err
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		return nil, err
	}
	return clientcmd.Write(*cfg)
}
