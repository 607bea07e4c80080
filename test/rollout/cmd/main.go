// Command cmd measures a rolling restart of two lfinit-wrapped HTTP servers
// behind HAProxy (health checks on /readyz) and prints the failed requests
// per configuration as a Markdown table: no drain delay, and a drain delay
// longer than HAProxy's detection time (inter × fall).
//
// Usage (from the repository root): go run ./test/rollout/cmd [-runs 3] [-drain 1s]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/light-fabric/lfinit/test/rollout"
)

func main() {
	runs := flag.Int("runs", 3, "rollouts per configuration")
	drain := flag.Duration("drain", time.Second, "drain delay of the second configuration")
	inter := flag.Duration("inter", 200*time.Millisecond, "HAProxy check interval")
	fall := flag.Int("fall", 2, "HAProxy fall count")
	rate := flag.Int("rate", 200, "requests per second through HAProxy")
	verbose := flag.Bool("v", false, "log each stop and start")
	keep := flag.Bool("keep", false, "keep the logs (HAProxy's and each lfinit's) and print where")
	flag.Parse()

	root, err := rollout.ModuleRoot()
	check(err)
	dir, err := os.MkdirTemp("", "lfinit-rollout-")
	check(err)
	if *keep {
		defer fmt.Fprintf(os.Stderr, "logs kept in %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	bins, err := rollout.Build(root, dir)
	check(err)

	logf := func(string, ...any) {}
	if *verbose {
		logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	}
	configs := []rollout.Config{
		{Name: "no drain delay", DrainDelay: 0, Inter: *inter, Fall: *fall, Rate: *rate},
		{Name: "drain delay " + drain.String(), DrainDelay: *drain, Inter: *inter, Fall: *fall, Rate: *rate},
		// Not lfinit's doing, for comparison: HAProxy's own retries on the other server.
		{Name: "no drain delay, HAProxy option redispatch", Inter: *inter, Fall: *fall, Rate: *rate, Redispatch: true},
	}
	fmt.Printf("| configuration | HAProxy detection (inter × fall) | run | requests | failed | failures | p99 latency | max latency |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|\n")
	for _, c := range configs {
		for i := range *runs {
			runDir, err := os.MkdirTemp(dir, "run-")
			check(err)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			res, err := rollout.Run(ctx, bins, runDir, c, logf)
			cancel()
			if err != nil {
				fmt.Fprintf(os.Stderr, "rollout %q: %v (logs in %s)\n", c.Name, err, runDir)
				os.Exit(1)
			}
			c = res.Config
			fmt.Printf("| %s | %v × %d = %v | %d | %d | %d | %s | %v | %v |\n", c.Name, c.Inter, c.Fall, c.Detection(),
				i+1, res.Requests, res.Failed, res.KindsString(), res.P99.Round(time.Millisecond), res.Max.Round(time.Millisecond))
		}
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "rollout:", err)
		os.Exit(1)
	}
}
