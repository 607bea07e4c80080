package main

import (
	"fmt"
	"time"
)

// idleResult is per contender: wake-ups per second (one per window), and
// RSS, anonymous RSS and Pss in KiB at the end.
type idleResult struct {
	wakeups           map[string]sample
	rss, rssAnon, pss map[string]float64
	threads           map[string]int
}

// benchIdle starts every contender at once, each as PID 1 with a child
// that sleeps (the Go floor has none), lets them settle, and counts their
// threads' context switches over windows of the given length.
func benchIdle(cs []cand, pauseBin string, settle, window time.Duration, windows int) (idleResult, error) {
	res := idleResult{wakeups: map[string]sample{}, rss: map[string]float64{}, rssAnon: map[string]float64{}, pss: map[string]float64{}, threads: map[string]int{}}
	var ins []*instance
	defer func() {
		for _, in := range ins {
			in.stop()
		}
	}()
	for _, c := range cs {
		child := []string{pauseBin}
		if c.noChild {
			child = nil
		}
		in, err := start(c.prefix, child, startOpts{})
		if err != nil {
			return res, fmt.Errorf("%s: %w", c.name, err)
		}
		ins = append(ins, in)
		if _, err := in.expect("ready", 5*time.Second); err != nil {
			return res, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	time.Sleep(settle)
	for range windows {
		before := make([]int64, len(cs))
		for i, in := range ins {
			before[i] = ctxSwitches(in.pid)
		}
		time.Sleep(window)
		for i, in := range ins {
			d := ctxSwitches(in.pid) - before[i]
			res.wakeups[cs[i].name] = append(res.wakeups[cs[i].name], float64(d)/window.Seconds())
		}
	}
	for i, in := range ins {
		res.rss[cs[i].name] = float64(statusKiB(in.pid, "VmRSS"))
		res.rssAnon[cs[i].name] = float64(statusKiB(in.pid, "RssAnon"))
		res.pss[cs[i].name] = float64(procKiB(in.pid, "smaps_rollup", "Pss"))
		res.threads[cs[i].name] = threads(in.pid)
	}
	return res, nil
}
