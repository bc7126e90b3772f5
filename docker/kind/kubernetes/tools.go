//go:build tools

// Package tools pins the Kubernetes v1.30 node binaries kind's node image needs (kubeadm, kubelet,
// kubectl, kube-controller-manager, kube-scheduler, kube-proxy; kube-apiserver comes from
// tests/infra/kube-apiserver). scripts/kind/tools.sh builds them with
// `go build k8s.io/kubernetes/cmd/<name>` from this module: k8s.io/kubernetes cannot be `go install`ed.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-proxy/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubeadm/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
	_ "k8s.io/kubectl/pkg/cmd"
)
