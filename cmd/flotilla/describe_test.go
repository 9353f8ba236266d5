package main

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

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
		{"describe work shows every cluster's phase and why", func(b *bytes.Buffer) error { describeWork(b, myApp); return nil }, `Name:         my-app
Namespace:    default
Kind:         Deployment
Generation:   3 (binding revision 4)
Scheduled:    true
Work:
  Cluster:      cluster1
    Status:     Running
    Replicas:   4 ready of 4
    Applied:    generation 3, observed generation 2
    Overrides:  default/tag-images
    Updated:    2026-11-28T13:00:00Z
  Cluster:      cluster2
    Status:     Pending
    Replicas:   0 ready of 2
    Applied:    generation 3, observed generation 0
  Cluster:      cluster3
    Status:     Unknown
    Replicas:   2 ready of 2
    Applied:    generation 3, observed generation 2
    Overrides:  default/tag-images
    Message:    cluster Unreachable since 2026-11-28T10:00:00Z; last reported Evicted
    Updated:    2026-11-28T13:00:00Z
`},
		{"describe cluster shows a lost cluster's state, taints and capacity", func(b *bytes.Buffer) error { return printCluster(b, clusters, "cluster3") }, `Name:          cluster3
Labels:        region=us,tier=prod
API Endpoint:  https://cluster3:6443
Sync Mode:     
Provider:      kind
Region:        us
Zones:         [a]
Joined:        2026-11-28T09:00:00Z
Ready:         false (Unreachable since 2026-11-28T10:00:00Z)
Conditions:
  TYPE   STATUS   REASON   MESSAGE
Taints:
  cluster.karmada.io/unreachable:NoSchedule
Kubernetes:    v1.31.0
Nodes:         1 ready of 3
Allocatable:   cpu 8, memory 8Gi, pods 110
Allocated:     cpu 2, memory 8Gi, pods 110
`},
		{"describe cluster shows a ready cluster's conditions", func(b *bytes.Buffer) error { return printCluster(b, clusters[:1], "cluster1") }, `Name:          cluster1
Labels:        region=eu,tier=prod
API Endpoint:  https://cluster1:6443
Sync Mode:     
Provider:      kind
Region:        eu
Zones:         [a]
Joined:        2026-11-28T09:00:00Z
Ready:         true (Ready since 2026-11-28T09:00:00Z)
Conditions:
  TYPE   STATUS   REASON   MESSAGE
  Ready   True   ClusterReady   ok
Kubernetes:    v1.31.0
Nodes:         3 ready of 3
Allocatable:   cpu 8, memory 8Gi, pods 110
Allocated:     cpu 2, memory 8Gi, pods 110
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, printed(t, tt.print)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}
