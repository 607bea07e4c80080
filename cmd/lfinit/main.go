// Command lfinit is an init for containers: it starts a service as its
// child, forwards signals, reaps zombies, and turns a stop request into a
// bounded, observable shutdown. See man/lfinit.1 and README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/light-fabric/lfinit/cmd/lfinit/internal/asynclog"
	"github.com/light-fabric/lfinit/cmd/lfinit/internal/early"
	"github.com/light-fabric/lfinit/cmd/lfinit/internal/final"
	"github.com/light-fabric/lfinit/cmd/lfinit/internal/push"
	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/metrics"
	"github.com/light-fabric/lfinit/notify"
	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/statusfile"
	"github.com/light-fabric/lfinit/supervisor"
	"github.com/light-fabric/lfinit/termlog"
)

func main() {
	// Nothing of lfinit's own runs before every signal whose Go default
	// would end it is caught (a usage error written to a closed stderr
	// must not die of SIGPIPE); the packages' initialisation ran beside it.
	<-early.Fatal
	os.Exit(run(os.Args, os.Environ(), os.Stdout, os.Stderr))
}

func run(args, env []string, stdout, stderr io.Writer) int {
	// Before anything else: a blocked signal mask must not reach the child.
	childEnv, maskErr := forward.EnsureEmptyMask(args, env)

	if len(args) > 1 {
		if _, ok := lookupSubcommand(args[1]); ok {
			return runSubcommand(args[1], args[2:], os.Getenv, stdout, stderr)
		}
	}
	c, err := parseArgs(args[1:], runEnv(os.LookupEnv))
	if code, done := answer(c, err, stdout, stderr); done {
		return code
	}
	if err := c.absPaths(); err != nil {
		return usage(stderr, err.Error())
	}
	if c.parentDeath != 0 && os.Getpid() != 1 {
		if err := setParentDeathSignal(c.parentDeath); err != nil {
			return usage(stderr, err.Error())
		}
	}

	// Everything that can fail on bad input fails here, before the child
	// exists: from the child's start on, nothing may be fatal.
	cred, childEnv, err := childUser(c.user, childEnv)
	if err != nil {
		return usage(stderr, err.Error())
	}
	pre, err := prepare(c)
	if err != nil {
		return usage(stderr, err.Error())
	}
	pre.cred = cred
	childEnv = withNotifySocket(childEnv, pre.notify, c.watchdog)
	return supervise(c, pre, env, childEnv, maskErr, stderr)
}

// answer handles a command line that asks no run: a usage error, --help,
// --version, tini -l. done is false when there is a run to do.
func answer(c *config, err error, stdout, stderr io.Writer) (code int, done bool) {
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		return usage(stderr, ue.msg), true
	case c.help:
		writeHelp(stdout)
	case c.version:
		fmt.Fprint(stdout, Build())
	case c.license:
		fmt.Fprint(stdout, licenseText)
	default:
		return 0, false
	}
	return 0, true
}

// supervise runs the child under the supervisor, with the logger and the
// observers around it, then writes the final records; it returns lfinit's
// exit code.
func supervise(c *config, pre *prepared, env, childEnv []string, maskErr error, stderr io.Writer) int {
	// The log's first line is often the last (the final summary): load the
	// time zone it is formatted in now, not between the child's exit and
	// lfinit's.
	_ = time.Local.String()
	logOut, log := newLogger(c, stderr)
	if maskErr != nil {
		log.Warn("started with blocked signals and could not clear them; the child inherits them", "err", maskErr)
	}
	warnUnknownVariables(env, log)
	obs, records := pre.start(c, log, logOut)
	// Handlers for every relayed signal are in place before the child starts.
	<-early.Done
	res := supervisor.Run(supervisor.Config{
		Options:      c.opts,
		Argv:         c.argv,
		Env:          childEnv,
		Target:       c.target,
		PID1:         os.Getpid() == 1,
		Log:          log,
		PreserveFDs:  c.keepFDs,
		Recorder:     obs.recorder,
		Publishers:   obs.publishers,
		Readiness:    c.readiness(),
		Signals:      supervisor.CaughtSignals(early.Relayed, early.Child),
		WarnOnReap:   c.warnOnReap,
		Credential:   pre.cred,
		Hook:         c.hook,
		Notify:       pre.notify,
		Watchdog:     c.watchdog,
		WatchdogStop: c.watchdogAction == "stop",
		Rehearse:     records.Rehearse,
	})
	if pre.notify != nil {
		pre.notify.Close()
	}
	// Written in line, in order, by this goroutine: lfinit then exits
	// without waiting for another thread.
	records.Write(res)
	return res.Code
}

// prepared holds what was checked and opened before the child starts.
type prepared struct {
	metrics net.Listener        // nil when --metrics-addr is not set
	cred    *syscall.Credential // the child's identity (--user), nil: lfinit's
	notify  *notify.Listener    // the notify socket (--ready-notify), nil: none
}

// prepare makes the checks that must fail before the child starts: the
// status file can be written, the metrics address can be listened on.
func prepare(c *config) (*prepared, error) {
	p := &prepared{}
	if err := reaper.CheckWait(); err != nil {
		return nil, err
	}
	if c.statusFile != "" {
		if err := statusfile.Prepare(c.statusFile); err != nil {
			return nil, err
		}
	}
	if c.termLog != "" && c.termLog != "none" {
		if err := termlog.Prepare(c.termLog); err != nil {
			return nil, err
		}
	}
	if c.readyNotify != "" {
		l, err := notify.Listen(c.readyNotify)
		if err != nil {
			return nil, fmt.Errorf("cannot open the notify socket (--ready-notify %s): %v", c.readyNotify, err)
		}
		p.notify = l
	}
	if c.metricsAddr != "" {
		l, err := metrics.Listen(c.metricsAddr)
		if err != nil {
			return nil, err
		}
		p.metrics = l
	}
	return p, nil
}

// observers are who hear of the run: the metrics record every event, the
// status file and the metrics take every snapshot.
type observers struct {
	recorder   supervisor.Recorder
	publishers []supervisor.Publish
}

// start serves metrics and starts the status-file writer, and says where
// the final records go.
func (p *prepared) start(c *config, log *slog.Logger, logOut *asynclog.Writer) (obs observers, rec final.Records) {
	rec = final.Records{Log: log, FlushLog: logOut.Close, StatusPath: c.statusFile, TerminationLog: terminationLog(c.termLog),
		Rehearsal: loggerTo(c, io.Discard)}
	var publisher *statusfile.Publisher
	if c.statusFile != "" {
		publisher = statusfile.NewPublisher(c.statusFile, func(kind string, err error) {
			log.Warn("cannot write the status file; supervision goes on", "path", c.statusFile, "kind", kind, "err", err)
		})
		obs.publishers = append(obs.publishers, publisher.Publish)
		rec.StatusFile = publisher
	}
	if c.readyNotify != "" {
		// lfinit's own NOTIFY_SOCKET, which the child does not get.
		if b := newBridge(os.Getenv("NOTIFY_SOCKET"), log); b != nil {
			obs.publishers = append(obs.publishers, b.publish)
		}
	}
	if p.metrics == nil && c.push.Gateway == "" {
		return obs, rec
	}
	// A push without --metrics-addr still needs the registry.
	m := newMetrics(c, logOut, publisher, p.notify)
	obs.recorder = m
	obs.publishers = append(obs.publishers, m.Status)
	rec.Metrics = m
	rec.Push = pusher(c.push, m.Gatherer(), log)
	if p.metrics != nil {
		p.serve(c.metricsAddr, m, log)
	}
	return obs, rec
}

// serve serves m's metrics and probes on the listener prepare opened.
func (p *prepared) serve(addr string, m *metrics.Metrics, log *slog.Logger) {
	m.SetLive(true)
	metrics.Serve(p.metrics, m.Handler())
	// At info only when port 0 let the kernel choose: then the log is
	// the one place that says which port it is.
	level := slog.LevelDebug
	if strings.HasSuffix(addr, ":0") {
		level = slog.LevelInfo
	}
	log.Log(context.Background(), level, "serving metrics and probes", "addr", p.metrics.Addr().String(), "paths", "/metrics /readyz /livez")
}

// pusher is the final push, nil without --push-gateway.
func pusher(p push.Config, g prometheus.Gatherer, log *slog.Logger) func() {
	if p.Gateway == "" {
		return nil
	}
	return func() {
		// Only now: the grouping may read the host name, work a shutdown
		// without a push must not do.
		_ = push.Final(p, push.Grouping(p.Grouping, os.Getenv), g, log)
	}
}

// newMetrics is lfinit's registry, with the signal counters an operator
// queries already at 0.
func newMetrics(c *config, logOut *asynclog.Writer, publisher *statusfile.Publisher, l *notify.Listener) *metrics.Metrics {
	src := metrics.Sources{
		// Counted at scrape time only: a /proc scan is no work for the loop.
		LiveChildren:    func() int { return len(reaper.Live(reaper.Walk(os.Getpid()))) },
		LogLinesDropped: logOut.Dropped,
	}
	if publisher != nil {
		src.StatusWriteFailures = publisher.Failures
	}
	if l != nil {
		src.NotifyCounts, src.NotifyKinds = l.Counts, notify.CountNames()
	}
	b := Build()
	m := metrics.New(metrics.BuildInfo{Version: b.Version, Revision: b.Revision}, src)
	m.KnownSignals(knownSignals(c.opts)...)
	return m
}

// newLogger is lfinit's slog logger on stderr, through a queue that never
// blocks the loop.
func newLogger(c *config, stderr io.Writer) (*asynclog.Writer, *slog.Logger) {
	out := asynclog.New(stderr, 1024)
	return out, loggerTo(c, out)
}

// loggerTo is lfinit's logger, as --log-format and --log-level say, on w.
func loggerTo(c *config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.logLevel}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if c.logFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(h).With("logger", "lfinit")
}

// terminationLog resolves --termination-log: the Kubernetes default when
// it exists, nothing for "none".
func terminationLog(flag string) string {
	switch flag {
	case "":
		return termlog.Default()
	case "none":
		return ""
	}
	return flag
}

func usage(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "lfinit: %s (see lfinit --help)\n", shortenMessage(msg))
	return exitcode.Usage
}
