package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// earlyCounts are the outcomes of a set of trials.
type earlyCounts struct {
	n, ok, lost, exit2 int
	other              map[int]int // exit code → trials
	lastLost, lastExit time.Duration
}

// countEarly counts the trials whose instant falls in [from, to).
func countEarly(ts []earlyTrial, from, to time.Duration) earlyCounts {
	c := earlyCounts{other: map[int]int{}, lastLost: -1, lastExit: -1}
	for _, t := range ts {
		if t.at < from || t.at >= to {
			continue
		}
		c.n++
		switch t.outcome {
		case earlyOK:
			c.ok++
		case earlyLost:
			c.lost++
			c.lastLost = max(c.lastLost, t.at)
		case earlyExit2:
			c.exit2++
			c.lastExit = max(c.lastExit, t.at)
		default:
			c.other[t.code]++
		}
	}
	return c
}

// unsafe is how many trials did not end in the bounded shutdown.
func (c earlyCounts) unsafe() int { return c.n - c.ok }

// width is the unsafe window estimated from the share of unsafe trials:
// span × that share, the integral over the span of the chance that a TERM
// at that instant is lost or answered with exit 2.
func (c earlyCounts) width(span time.Duration, unsafe int) float64 {
	if c.n == 0 {
		return math.NaN()
	}
	return float64(span) / 1e6 * float64(unsafe) / float64(c.n)
}

// stderr is the standard error of the unsafe window's estimate: the
// span times that of a share of c.n trials.
func (c earlyCounts) stderr(span time.Duration) float64 {
	if c.n == 0 {
		return math.NaN()
	}
	p := float64(c.unsafe()) / float64(c.n)
	return float64(span) / 1e6 * math.Sqrt(p*(1-p)/float64(c.n))
}

// cell is one bin of one init, in words: all ok, lost, exit 2, other codes.
func (c earlyCounts) cell() string {
	if c.n == 0 {
		return ""
	}
	if c.ok == c.n {
		return fmt.Sprintf("all ok (%d)", c.n)
	}
	var parts []string
	if c.lost > 0 {
		parts = append(parts, fmt.Sprintf("lost %d", c.lost))
	}
	if c.exit2 > 0 {
		parts = append(parts, fmt.Sprintf("exit 2 ×%d", c.exit2))
	}
	codes := make([]int, 0, len(c.other))
	for code := range c.other {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	for _, code := range codes {
		parts = append(parts, fmt.Sprintf("exit %d ×%d", code, c.other[code]))
	}
	if c.ok > 0 {
		parts = append(parts, fmt.Sprintf("ok %d", c.ok))
	}
	return strings.Join(parts, ", ")
}

// binEnd is where the bin that starts at from ends; the one that starts
// at the span's end takes in the kills a late wake-up sent after it.
func binEnd(from time.Duration) time.Duration {
	if from >= earlySpan {
		return math.MaxInt64
	}
	return from + earlyBin
}

// ms formats an instant, "—" when there is none.
func ms(d time.Duration) string {
	if d < 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f ms", float64(d)/1e6)
}

// earlySection writes the early-stop tables and returns lfinit's summary
// rows.
func (r *report) earlySection(out *strings.Builder) []summaryRow {
	res := r.early
	fmt.Fprintf(out, "### A stop in the first %d ms: SIGTERM at a uniformly random instant after the PID 1 appears\n\n", earlySpan/time.Millisecond)
	fmt.Fprintf(out, "Each round draws one instant in [0, %d ms) and runs every init once with it, in a new random order: "+
		"`unshare --pid --fork --mount-proc INIT pause`, unshare's children polled every %d µs until its child (the namespace's PID 1, which then mounts /proc and execs the init) is seen, "+
		"SIGTERM to that PID 1 (pidfd) at the instant after it was seen, on a thread with 1 ns of timer slack. "+
		"ok: PID 1 exited 143 (the child died of the forwarded TERM); lost: PID 1 still ran %v later (the kernel drops a signal to a namespace's PID 1 that has no handler for it; in a container the engine's SIGKILL ends it at its stop timeout, exit 137); "+
		"exit 2: the Go runtime's handler was installed and signal.Notify not yet called, and it exited 2.\n\n", earlySpan/time.Millisecond, earlyPoll/time.Microsecond, res.lostAfter)
	var shown []initSpec
	for _, i := range r.inits {
		if _, ok := res.trials[i.name]; ok {
			shown = append(shown, i)
		}
	}
	earlyBins(out, res, shown)
	return r.earlySummary(earlyWindows(out, res, shown))
}

// earlyBins writes the outcomes by 2 ms bin, one column an init.
func earlyBins(out *strings.Builder, res earlyResult, shown []initSpec) {
	t := table{head: []string{"after the PID 1 appears"}}
	for _, i := range shown {
		t.head = append(t.head, i.name)
	}
	for from := time.Duration(0); from < earlySpan; from += earlyBin {
		row := []string{fmt.Sprintf("%d–%d ms", from/time.Millisecond, (from+earlyBin)/time.Millisecond)}
		for _, i := range shown {
			row = append(row, countEarly(res.trials[i.name], from, binEnd(from)).cell())
		}
		t.add(row...)
	}
	late := []string{fmt.Sprintf("≥ %d ms (the kill's thread woke late)", earlySpan/time.Millisecond)}
	n := 0
	for _, i := range shown {
		c := countEarly(res.trials[i.name], earlySpan, binEnd(earlySpan))
		late, n = append(late, c.cell()), n+c.n
	}
	if n > 0 {
		t.add(late...)
	}
	fmt.Fprintf(out, "%s\n", t.String())
}

// earlyWindows writes each init's totals and unsafe window, and returns
// the windows.
func earlyWindows(out *strings.Builder, res earlyResult, shown []initSpec) map[string]float64 {
	w := table{head: []string{"init", "trials", "ok", "lost", "exit 2", "other", "unsafe window (span × unsafe share)", "± 1 s.e.", "of it exit 2", "last lost at", "last exit 2 at"}}
	widths := map[string]float64{}
	for _, i := range shown {
		c := countEarly(res.trials[i.name], 0, math.MaxInt64)
		widths[i.name] = c.width(earlySpan, c.unsafe())
		w.add(i.name, fmt.Sprint(c.n), fmt.Sprint(c.ok), fmt.Sprint(c.lost), fmt.Sprint(c.exit2), fmt.Sprint(c.unsafe()-c.lost-c.exit2),
			num(widths[i.name], 2)+" ms", num(c.stderr(earlySpan), 2)+" ms", num(c.width(earlySpan, c.exit2), 2)+" ms", ms(c.lastLost), ms(c.lastExit))
	}
	fmt.Fprintf(out, "%s\nThe unsafe window is the span times the share of trials that were lost or exited 2: the chance that a TERM is one of them, integrated over the span; its standard error, span × √(p(1−p)/n), says how far two inits' windows must differ to mean anything. "+
		"The last instants are the latest trials of each kind; the instants are spread uniformly, so a window's edge is seen only as finely as the trials fall.\n\n", w.String())
	return widths
}

// earlySummary is lfinit's two rows of the summary: its unsafe window
// against the Go init's, and its exit 2s outside the Go init's exit-2 bins.
func (r *report) earlySummary(widths map[string]float64) []summaryRow {
	res := r.early
	lf, ok := widths["lfinit"]
	if !ok {
		return nil
	}
	of := func(n string) float64 {
		if v, ok := widths[n]; ok {
			return v
		}
		return math.NaN()
	}
	bestName, best := r.bestAnchor(of, false)
	goInit := of(goInitName)
	rows := []summaryRow{{"early SIGTERM (0–16 ms): unsafe window", num(lf, 2) + " ms", fmt.Sprintf("%s ms (%s)", num(best, 2), bestName), ratio(lf, best),
		refCell(goInit, lf, 2, "ms"), refCell(of(goDepsInitName), lf, 2, "ms"), "≤ Go init", verdict(lf <= goInit, !math.IsNaN(goInit))}}
	floor, ok := res.trials[goInitName]
	if !ok {
		return rows
	}
	stray := 0
	for from := time.Duration(0); from <= earlySpan; from += earlyBin {
		if countEarly(floor, from, binEnd(from)).exit2 == 0 {
			stray += countEarly(res.trials["lfinit"], from, binEnd(from)).exit2
		}
	}
	return append(rows, summaryRow{"early SIGTERM: lfinit's exit 2s in 2 ms bins where the Go init has none", fmt.Sprint(stray), "", "", "", "", "0", verdict(stray == 0, true)})
}
