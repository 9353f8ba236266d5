package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/readmodel"
)

func TestDescribe(t *testing.T) {
	v := recordedViews(t)
	clusters := v.clusters
	myApp, err := readmodel.FindTemplate(v.decisions, v.work, "my-app", "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		print func(*bytes.Buffer) error
		want  string
	}{
		{"describe work shows every cluster's phase and why", func(b *bytes.Buffer) error { describeWork(b, myApp, v.fleet); return nil }, `Name:         my-app
Namespace:    default
Kind:         Deployment
Generation:   3 (binding revision 4)
Scheduled:    true
Policy:       propagationpolicy/my-app-policy
Decided:      2026-11-28T11:00:00Z
Replicas:     4 ready of 6 desired
Work:
  CLUSTER    STATUS    READY   DESIRED   GENERATION   OBSERVED   OVERRIDES            UPDATED                MESSAGE
  cluster1   Running   4       4         3            2          default/tag-images   2026-11-28T13:00:00Z   
  cluster2   Pending   0       2         3            0          <none>               -                      
  cluster3   Unknown   2       0         3            2          default/tag-images   2026-11-28T13:00:00Z   cluster Unreachable since 2026-11-28T10:00:00Z; last reported Evicted
`},
		{"describe cluster shows a lost cluster's state, taints and capacity", func(b *bytes.Buffer) error { return printCluster(b, clusters, "cluster3") }, `Name:           cluster3
Labels:         region=us,tier=prod
API Endpoint:   https://cluster3:6443
Sync Mode:      
Provider:       kind
Region:         us
Zones:          a
Joined:         2026-11-28T09:00:00Z
Ready:          Unknown (Unreachable since 2026-11-28T10:00:00Z)
Kubernetes:     v1.31.0
Nodes:          1 ready of 3
Allocatable:    cpu 8, memory 8Gi, pods 110
Allocated:      cpu 2, memory 8Gi, pods 110
Conditions:
  TYPE   STATUS   REASON   MESSAGE   LAST TRANSITION
Taints:
  cluster.karmada.io/unreachable:NoSchedule
`},
		{"describe cluster shows a ready cluster's conditions", func(b *bytes.Buffer) error { return printCluster(b, clusters[:1], "cluster1") }, `Name:           cluster1
Labels:         region=eu,tier=prod
API Endpoint:   https://cluster1:6443
Sync Mode:      
Provider:       kind
Region:         eu
Zones:          a
Joined:         2026-11-28T09:00:00Z
Ready:          True (Ready since 2026-11-28T09:00:00Z)
Kubernetes:     v1.31.0
Nodes:          3 ready of 3
Allocatable:    cpu 8, memory 8Gi, pods 110
Allocated:      cpu 2, memory 8Gi, pods 110
Conditions:
  TYPE    STATUS   REASON         MESSAGE   LAST TRANSITION
  Ready   True     ClusterReady   ok        2026-11-28T09:00:00Z
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, printed(t, tt.print)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDescribeNamesWhatItShowsForATypeItHasNoViewOf: describe instances,
// frq or deadletters said "name the template"; it now says which types
// describe shows and where the others' fields are.
func TestDescribeNamesWhatItShowsForATypeItHasNoViewOf(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url, _ := eventstest.Server(t)
	for _, word := range []string{"instances", "frq", "deadletters"} {
		_, _, err := runCLI(t, url, "describe", word)
		if err == nil || !strings.Contains(err.Error(), "describe shows clusters, policies and templates, not "+word) ||
			!strings.Contains(err.Error(), "flotilla get "+word+" -o yaml") {
			t.Errorf("describe %s: %v, want it to name what describe shows and `get %s -o yaml`", word, err, word)
		}
	}
}
