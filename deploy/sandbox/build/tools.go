//go:build tools

// Package build pins the member-cluster binaries the sandbox runs. It is a
// separate module so the main go.mod never carries k8s.io/kubernetes.
package build

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
