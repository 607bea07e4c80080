// Package tools pins the Prometheus operator's API types that
// test/kubernetes/crds generates the operator's CRDs from, with
// controller-gen (the tool of go.mod). A module of its own, so that
// test/kubernetes's go.mod and go.sum (the key of ./build's cache) stay
// as they are.
package tools

import _ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
