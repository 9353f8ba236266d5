package eventstest

import (
	"fmt"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/sealing"
)

// SealedRegistration is the registration policyd would publish for a
// member at server whose kubeconfig (no user credentials) is sealed to key.
func SealedRegistration(t testing.TB, key *sealing.Key, name, server string, generation int64) events.ClusterRegistration {
	t.Helper()
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: %q}}]
users: [{name: m, user: {}}]
contexts: [{name: m, context: {cluster: m, user: m}}]
current-context: m
`, server)
	sealed, err := sealing.Seal(key.Public, []byte(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	return events.ClusterRegistration{Name: name, Generation: generation, Spec: policy.ClusterSpec{APIEndpoint: server},
		Credentials: &events.SealedSecret{Namespace: "karmada-system", Name: name, KeyID: key.ID, Data: map[string][]byte{"kubeconfig": sealed}}}
}
