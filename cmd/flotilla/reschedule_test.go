package main

import (
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
)

// reschedule asks for what policyd can do: a template no policy claims
// (policyd dead-letters its reschedule) is refused when named and passed
// over when selected, a --policy that does not exist is an error, --all
// takes no names, and a template picked twice is asked for once.
func TestRescheduleRefusesTemplatesNoPolicyClaimsAndAnUnknownPolicy(t *testing.T) {
	url, bus := eventstest.Server(t)
	stop := startPolicyd(t, bus)
	defer stop()
	file := writeFile(t, "shop.yaml", `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [cluster1]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: lonely, namespace: shop, labels: {app: web}}
data: {colour: red}
`)
	if out, errOut, err := runCLI(t, url, "apply", "-f", file, "--timeout", "20s"); err != nil {
		t.Fatalf("apply: %v\n%s%s", err, out, errOut)
	}
	const web = "shop/Deployment.apps/web"
	for _, c := range []struct {
		name     string
		args     string
		wantExit int
		// wantOut is stdout; wantErr is in stderr or the error.
		wantOut, wantErr string
		// wantAsked are the subjects of the requests this step publishes.
		wantAsked []string
	}{
		{"a template a policy claims is rescheduled", "deployment/web -n shop", 0,
			"deployment.apps/web reschedule requested\n", "", []string{web}},
		{"a template no policy claims is refused and nothing is published", "configmap/lonely -n shop", 1,
			"", "error: configmap/lonely: not rescheduled: no policy claims it", nil},
		{"with one named that no policy claims the others are rescheduled", "deployment/web configmap/lonely -n shop", 1,
			"deployment.apps/web reschedule requested\n", "configmap/lonely: not rescheduled: no policy claims it", []string{web}},
		{"a policy that does not exist is an error", "--policy nope -n shop", 1,
			"", "--policy nope: no propagationpolicy nope in namespace shop, nor a clusterpropagationpolicy", nil},
		{"--all with names is an error", "--all deployment/web -n shop", 1,
			"", "--all takes no names", nil},
		{"--all passes over the templates no policy claims", "--all -n shop", 0,
			"deployment.apps/web reschedule requested\n", "1 matching template(s) passed over: no policy claims them", []string{web}},
		{"a template named and selected is asked for once", "deployment/web -l app=web -n shop", 0,
			"deployment.apps/web reschedule requested\n", "", []string{web}},
		{"--policy picks what the policy claims", "--policy web -n shop", 0,
			"deployment.apps/web reschedule requested\n", "", []string{web}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkRequests(t, url, bus, events.TypeRescheduleRequested, append([]string{"reschedule"}, strings.Fields(c.args)...),
				c.wantExit, c.wantOut, c.wantErr, c.wantAsked)
		})
	}
}
