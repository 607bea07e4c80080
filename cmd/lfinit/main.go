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

	"github.com/light-fabric/lfinit/forward"
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

	if len(args) > 1 && args[1] == "version" {
		fmt.Fprintf(stdout, "lfinit %s\n", version)
		return 0
	}
	c, err := parseArgs(args[1:], os.Getenv)
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "lfinit: %s (see lfinit --help)\n", ue.msg)
		return supervisor.ExitUsage
	case c.help:
		writeHelp(stdout)
		return 0
	case c.version:
		fmt.Fprintf(stdout, "lfinit %s\n", version)
		return 0
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
	return supervisor.Run(supervisor.Config{
		Options: c.opts,
		Argv:    c.argv,
		Env:     childEnv,
		Target:  c.target,
		PID1:    os.Getpid() == 1,

		PreserveFDs: c.keepFDs,
		Log:         log,
	})
}
