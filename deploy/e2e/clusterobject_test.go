package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// TestClusterObjectWithSecretRefRegistersAMemberAndItsCredentialsNeverTravelInPlainText
// is seeds 002/004's registration: a cluster.karmada.io Cluster whose
// spec.secretRef names a kubeconfig Secret applied alongside it. The member
// becomes Ready and takes work; the Secret is never propagated; the bus never
// carries the member's token in plain text.
func TestClusterObjectWithSecretRefRegistersAMemberAndItsCredentialsNeverTravelInPlainText(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	doc, token := seed002Clusters(t, s.sandbox)
	path := filepath.Join(s.dir, "clusters.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s.mustCLI("apply", "-f", path)
	eventually(t, 60*time.Second, "aws-prod Ready", func() error {
		out := s.mustCLI("get", "clusters")
		if !strings.Contains(out, "aws-prod") || !strings.Contains(out, "True") {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
	if out := s.mustCLI("describe", "cluster", "aws-prod"); !strings.Contains(out, "Ready:          True") || !strings.Contains(out, "ClusterReady") {
		t.Fatalf("describe cluster:\n%s", out)
	}

	// Seed 002's nginx-global: only aws-prod exists here, so it runs all 10 replicas.
	s.cleanMembersOf([]string{"cluster3"}, "default", "nginx-web")
	t.Cleanup(func() { s.halt(); s.cleanMembersOf([]string{"cluster3"}, "default", "nginx-web") })
	s.mustCLI("apply", "-f", "../../examples/seed002/nginx-global.yaml")
	ctx := context.Background()
	cs := s.member("cluster3")
	eventually(t, 90*time.Second, "nginx-web on aws-prod (cluster3)", func() error {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "nginx-web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if *d.Spec.Replicas != 10 {
			return fmt.Errorf("replicas %d", *d.Spec.Replicas)
		}
		return nil
	})
	out := s.mustCLI("get", "placements", "-o", "wide")
	if !strings.Contains(out, "aws-prod:10") {
		t.Fatalf("placement:\n%s", out)
	}
	// The credentials Secret is not a template: it is nowhere in the member.
	if _, err := cs.CoreV1().Secrets("karmada-system").Get(ctx, "aws-kubeconfig-secret", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("credentials secret propagated? %v", err)
	}
	// Nothing on the bus carries the member's token in plain text.
	s.expectNoPlainToken(token)
}

func (s *system) cleanMembersOf(clusters []string, namespace, deployment string) {
	for _, m := range clusters {
		_ = s.member(m).AppsV1().Deployments(namespace).Delete(context.Background(), deployment, metav1.DeleteOptions{})
	}
}

// seed002Clusters is seed 002's clusters.yaml with sandbox cluster3's
// kubeconfig in its Secret and its API server as aws-prod's apiEndpoint;
// token is the kubeconfig's token, which must never travel in plain text.
func seed002Clusters(t *testing.T, sandbox string) (doc, token string) {
	t.Helper()
	kubeconfig, err := os.ReadFile(filepath.Join(sandbox, "cluster3.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range kc.AuthInfos {
		token = a.Token
	}
	indented := "    " + strings.ReplaceAll(strings.TrimSpace(string(kubeconfig)), "\n", "\n    ")
	doc = `apiVersion: v1
kind: Secret
metadata:
  name: aws-kubeconfig-secret
  namespace: karmada-system
type: Opaque
stringData:
  kubeconfig: |
` + indented + `
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: aws-prod
  labels: {provider: aws}
spec:
  apiEndpoint: "` + kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster].Server + `"
  provider: aws
  secretRef:
    namespace: karmada-system
    name: aws-kubeconfig-secret
`
	return doc, token
}

// expectNoPlainToken fails if any stream of the bus carries token in
// plain text.
func (s *system) expectNoPlainToken(token string) {
	s.t.Helper()
	ctx := context.Background()
	bus, err := natsbus.Connect(ctx, s.natsURL, natsbus.Options{})
	if err != nil {
		s.t.Fatal(err)
	}
	defer bus.Close()
	for _, st := range events.Streams {
		ms, err := bus.Replay(ctx, st.Name, natsbus.ReplayOptions{})
		if err != nil {
			s.t.Fatal(err)
		}
		for _, m := range ms {
			if bytes.Contains(m.Data, []byte(token)) {
				s.t.Fatalf("%s seq %d (%s) carries the member token in plain text", st.Name, m.Sequence, m.Subject)
			}
		}
	}
}

// memberServerAndToken are the API server URL and bearer token in the
// sandbox's kubeconfig of member.
func memberServerAndToken(t *testing.T, sandbox, member string) (server, token string) {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(filepath.Join(sandbox, member+".kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range kc.AuthInfos {
		token = a.Token
	}
	return kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster].Server, token
}
