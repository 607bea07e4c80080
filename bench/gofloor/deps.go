//go:build deps

// Built with -tags deps, gofloor also links the packages lfinit's contract
// requires (net/http, client_golang's prometheus, collectors, promhttp and
// push, and through them protobuf) and does nothing with them: their
// package initialisation, page faults and binary size are then part of the
// floor, so bench/initbench can tell what lfinit costs beyond its stack.
package main

import (
	_ "net/http"

	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/collectors"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_golang/prometheus/push"
)
