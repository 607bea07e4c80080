//go:build lfcode

// Built with -tags 'deps lfcode', gofloor also links the code lfinit runs
// (the supervisor and its packages, the metrics, status file, notify,
// readiness and termination-message code, client_golang's collectors,
// promhttp and push, slog's handlers, flag) and never calls it: its binary
// is then nearly lfinit's, and its start and stop tell what lfinit's size
// costs before lfinit does any work of its own (bench/codefloor). The
// packages' own initialisation runs, lfinit's included (forward's signal
// table), as it does in lfinit.
package main

import (
	"flag"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/push"

	"github.com/light-fabric/lfinit/metrics"
	"github.com/light-fabric/lfinit/notify"
	"github.com/light-fabric/lfinit/readiness"
	"github.com/light-fabric/lfinit/statusfile"
	"github.com/light-fabric/lfinit/supervisor"
	"github.com/light-fabric/lfinit/termlog"
)

// linked holds a reference to each entry point, so the linker keeps the
// code they reach; nothing calls them.
var linked = []any{
	supervisor.Run, metrics.Listen, notify.Listen, statusfile.NewPublisher, termlog.Prepare,
	(*readiness.Check).Watch, push.New, collectors.NewGoCollector, collectors.NewProcessCollector,
	promhttp.HandlerFor, slog.NewJSONHandler, slog.NewTextHandler, flag.NewFlagSet, (*flag.FlagSet).Parse,
}

// init reads linked, which makes it reachable (an unread variable's
// initialiser would be dropped with the code it names).
func init() {
	if len(linked) == 0 {
		panic("gofloor: nothing linked")
	}
}
