// Command lfinit is an init for containers: it starts a service as its
// child, forwards signals, reaps zombies, and turns a stop request into a
// bounded, observable shutdown. See man/lfinit.1 and README.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/light-fabric/lfinit/cmd/lfinit/internal/early"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/metrics"
	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/statusfile"
	"github.com/light-fabric/lfinit/supervisor"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run(os.Args, os.Environ(), os.Stdout, os.Stderr))
}

func run(args, env []string, stdout, stderr io.Writer) int {
	// Before anything else: a blocked signal mask must not reach the child.
	childEnv, maskErr := forward.EnsureEmptyMask(args, env)

	if len(args) > 1 {
		if args[1] == "version" {
			fmt.Fprintf(stdout, "lfinit %s\n", version)
			return 0
		}
		if _, ok := subcommands[args[1]]; ok {
			return runSubcommand(args[1], args[2:], os.Getenv, stdout, stderr)
		}
	}
	c, err := parseArgs(args[1:], os.Getenv)
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		return usage(stderr, ue.msg)
	case c.help:
		writeHelp(stdout)
		return 0
	case c.version:
		fmt.Fprintf(stdout, "lfinit %s\n", version)
		return 0
	}

	// Everything that can fail on bad input fails here, before the child
	// exists: from the child's start on, nothing may be fatal.
	var observers []supervisor.Observer
	var publisher *statusfile.Publisher
	if c.statusFile != "" {
		if err := statusfile.Prepare(c.statusFile); err != nil {
			return usage(stderr, err.Error())
		}
	}
	var m *metrics.Metrics
	metricsAt := ""
	if c.metricsAddr != "" {
		l, err := metrics.Listen(c.metricsAddr)
		if err != nil {
			return usage(stderr, err.Error())
		}
		// Counted at scrape time only: a /proc scan is no work for the loop.
		m = metrics.New(version, func() int { return len(reaper.Descendants(reaper.Table("/proc"), os.Getpid())) })
		m.SetLive(true)
		metrics.Serve(l, m.Handler())
		metricsAt = l.Addr().String()
		observers = append(observers, m)
	}
	termLog := c.termLog
	switch termLog {
	case "":
		termLog = statusfile.DefaultTerminationLog()
	case "none":
		termLog = ""
	}

	logOut := supervisor.NewAsyncWriter(stderr, 1024)
	defer logOut.Close(200 * time.Millisecond)
	hopts := &slog.HandlerOptions{Level: c.logLevel}
	var h slog.Handler = slog.NewTextHandler(logOut, hopts)
	if c.logFormat == "json" {
		h = slog.NewJSONHandler(logOut, hopts)
	}
	log := slog.New(h).With("logger", "lfinit")
	if maskErr != nil {
		log.Warn("started with blocked signals and could not clear them; the child inherits them", "err", maskErr)
	}
	if metricsAt != "" {
		log.Info("serving metrics and probes", "addr", metricsAt, "paths", "/metrics /readyz /livez")
	}
	if c.statusFile != "" {
		publisher = statusfile.NewPublisher(c.statusFile, func(kind string, err error) {
			log.Warn("cannot write the status file; supervision goes on", "path", c.statusFile, "kind", kind, "err", err)
		})
		observers = append(observers, supervisor.StatusFunc(publisher.Publish))
	}
	// Handlers for every relayed signal are in place before the child starts.
	<-early.Done
	code := supervisor.Run(supervisor.Config{
		Options:        c.opts,
		Argv:           c.argv,
		Env:            childEnv,
		Target:         c.target,
		PID1:           os.Getpid() == 1,
		Log:            log,
		PreserveFDs:    c.keepFDs,
		Observers:      observers,
		Readiness:      c.readiness(),
		TerminationLog: termLog,
		Signals:        supervisor.CaughtSignals(early.Relayed, early.Child),
	})
	if m != nil {
		m.SetLive(false)
	}
	if publisher != nil && !publisher.Close(time.Second) {
		log.Warn("the final status was not written in time", "path", c.statusFile)
	}
	return code
}

func usage(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "lfinit: %s (see lfinit --help)\n", msg)
	return supervisor.ExitUsage
}
