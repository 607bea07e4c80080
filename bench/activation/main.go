// Command activation measures what socket activation's exec step costs:
// lfinit as PID 1 of a fresh PID namespace runs /bin/true, once with
// LISTEN_PID naming lfinit (the child starts through the exec step, which
// sets its LISTEN_PID) and once naming another pid (the child starts
// directly), interleaved round by round so both share the machine's
// noise. It prints the wall time of each run, start to exit, and the
// difference of the medians. It needs root (unshare --pid).
//
//	scripts/build && go run ./bench/activation -lfinit bin/lfinit -n 300
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"
)

func main() {
	lfinit := flag.String("lfinit", "bin/lfinit", "the lfinit binary to measure")
	n := flag.Int("n", 300, "runs of each kind")
	flag.Parse()
	var step, direct []time.Duration
	for i := 0; i < *n; i++ {
		// $$ is the shell that execs lfinit: lfinit's own pid, 1.
		step = append(step, runOnce(*lfinit, "$$"))
		direct = append(direct, runOnce(*lfinit, "2"))
	}
	p50s, p50d := report("through the exec step (LISTEN_PID=1, lfinit)", step), report("directly (LISTEN_PID=2, another pid)", direct)
	fmt.Printf("exec step: +%.3f ms at the median\n", ms(p50s-p50d))
}

// runOnce times one run of lfinit -- /bin/true with listenPID.
func runOnce(lfinit, listenPID string) time.Duration {
	script := fmt.Sprintf("LISTEN_FDS=0 LISTEN_PID=%s exec %s --termination-log none -- /bin/true", listenPID, lfinit)
	cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", script)
	begun := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "activation: %v\n%s", err, out)
		os.Exit(1)
	}
	return time.Since(begun)
}

// report prints the distribution of runs and returns its median.
func report(what string, runs []time.Duration) time.Duration {
	slices.Sort(runs)
	q := func(p float64) time.Duration { return runs[int(p*float64(len(runs)-1))] }
	fmt.Printf("%-48s runs %d  p10 %.3f ms  p50 %.3f ms  p90 %.3f ms\n", what, len(runs), ms(q(0.1)), ms(q(0.5)), ms(q(0.9)))
	return q(0.5)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
