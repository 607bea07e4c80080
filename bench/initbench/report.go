package main

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Names of the contenders that are not inits under test.
const (
	plainName         = "plain /bin/true"
	lfinitMetricsName = "lfinit --metrics-addr 127.0.0.1:0"
	goFloorName       = "Go floor (select{} + signal.Notify)"
	goDepsFloorName   = "Go floor + lfinit's deps (select{} + signal.Notify)"
	goInitName        = "Go floor init (bench/gofloor)"
	goDepsInitName    = "Go floor init + lfinit's deps (bench/gofloor -tags deps)"
)

// The targets each figure of the summary is checked against.
const (
	fwdP99Target      = 500.0 // µs added
	startupRatio      = 1.25  // × the best anchor's added overhead
	cpuPerOrphan      = 4.0   // µs
	rssRatioToGo      = 1.3   // × the Go floor
	rssMetricsMiB     = 10.0
	deadlineP99Target = 2.0 // ms
	flipP99Target     = 1.0 // ms
	sizeTargetMiB     = 9.0
	// lfinit at the floor of its own stack: what it adds over a Go init
	// with its dependencies, and the stricter forwarding p99 that allows.
	shutOverDepsUs = 100.0 // µs of shutdown added over the Go init with lfinit's deps
	fwdOverDepsUs  = 10.0  // µs of SIGTERM forwarding added over the same
	fwdP99Floor    = 300.0 // µs added, p99
	rssAnonMiB     = 1.5
)

// report gathers the results of one run and renders them.
type report struct {
	cfg       config
	inits     []initSpec
	missing   []string
	cmd       string
	tags      string
	stderr    string // where PID 1's stderr went: -stderr's value
	tmpfs     bool   // the Go inits ran from copies on tmpfs
	started   time.Time
	took      time.Duration
	loadStart string
	loadEnd   string

	sizes       []sizeRow
	startup     map[string]sample
	forward     forwardResult
	shutdown    map[string]sample
	early       earlyResult
	reap        []reapRun
	idle        idleResult
	idleCands   []cand
	deadlineOff sample
	deadlineOn  sample
	flip        sample
	flipRTT     sample
}

// summaryRow is one line of the summary: lfinit's figure, the best
// anchor's, their ratio, the two Go floors' figures with lfinit's ratio to
// each, the target and whether it is met.
type summaryRow struct {
	what, lfinit, best, ratio, goInit, goDeps, target, verdict string
}

// refCell is a Go floor's figure and lfinit's ratio to it, for the summary.
func refCell(v, lfinit float64, dec int, unit string) string {
	if math.IsNaN(v) {
		return ""
	}
	sep := " "
	if strings.HasPrefix(unit, "/") {
		sep = ""
	}
	return fmt.Sprintf("%s%s%s (%s)", num(v, dec), sep, unit, ratio(lfinit, v))
}

func (r *report) String() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("## Benchmark: lfinit against tini, dumb-init and catatonit\n\n")
	w("Command: `%s` (as root; %s).\n", r.cmd, r.took.Round(time.Second))
	w("Machine: %s, %d CPUs, Linux %s, %s; load average %s at the start, %s at the end. %s.\n",
		cpuModel(), runtime.NumCPU(), kernel(), goVersion(), r.loadStart, r.loadEnd, r.started.UTC().Format("2006-01-02"))
	w("PID 1's stderr: %s", stderrModes[r.stderr])
	if r.stderr != "null" {
		// They fork unshare themselves, onto /dev/null, whatever -stderr says.
		w(" (The startup and early-stop runs keep /dev/null.)")
	}
	w("\n")
	if r.tmpfs {
		w("The Go inits (lfinit, its variants, the floors) run from copies on tmpfs, which the page cache holds the same way whatever wrote them.\n")
	} else {
		w("The Go inits run from where they are (-in-place, or /dev/shm is not tmpfs): how the page cache holds each binary moves their starts.\n")
	}
	w("Anchors: %s.", anchorVersions())
	if len(r.missing) > 0 {
		w(" Not installed, left out: %s.", strings.Join(r.missing, ", "))
	}
	w("\n\nEvery init runs as PID 1 of a fresh PID namespace (`unshare --pid --fork --mount-proc INIT CHILD`); ")
	w("each round runs every contender once in a new random order, so all share the same noise. ")
	w("\"Added\" is a quantile minus the same quantile of the floor (the same child without an init). ")
	w("Ratios are lfinit's figure over the best anchor's in this run, and over each of the two Go floors: ")
	w("bench/gofloor, the smallest Go init (os/signal, one loop, kill, wait4), and the same built with `-tags deps`, ")
	w("which also links lfinit's dependencies (net/http, client_golang's prometheus, collectors, promhttp and push, protobuf) and does nothing with them. ")
	w("The C inits are the best anchor; the bare Go init is what the Go runtime alone costs; the Go init with the dependencies is the floor of lfinit's own stack.\n\n")

	var sum []summaryRow
	var details strings.Builder

	if r.startup != nil {
		sum = append(sum, r.latencySection(&details, "Startup + exit: `INIT /bin/true`", "ms", 3, r.startup, plainName,
			"startup+exit overhead added, p50", func(l, best float64) (string, bool) {
				return fmt.Sprintf("≤ %.2f× best anchor", startupRatio), l <= startupRatio*best
			})...)
	}
	if r.forward.term != nil {
		rows := r.latencySection(&details, "Signal forwarding: kill(SIGTERM) to PID 1 → the child's sigwaitinfo returns", "µs", 1, r.forward.term, floorName,
			"forwarding latency added (SIGTERM), p50", func(l, best float64) (string, bool) { return "≤ best anchor", l <= best })
		sum = append(sum, rows...)
		if lf, ok := r.forward.term["lfinit"]; ok {
			p99 := lf.dist().minus(r.forward.term[floorName].dist()).p99
			sum = append(sum, summaryRow{"forwarding latency added (SIGTERM), p99", us(p99), "", "", "", "", fmt.Sprintf("< %.0f µs", fwdP99Target), verdict(p99 < fwdP99Target, true)},
				summaryRow{"forwarding latency added (SIGTERM), p99, at the floor of lfinit's stack", us(p99), "", "", "", "", fmt.Sprintf("< %.0f µs", fwdP99Floor), verdict(p99 < fwdP99Floor, true)})
			sum = append(sum, overDeps("forwarding (SIGTERM): lfinit's added p50 − the Go init + deps'", r.forward.term, fwdOverDepsUs)...)
		}
		r.latencySection(&details, "Signal relay: kill(SIGUSR1) to PID 1 → the child's sigwaitinfo returns (not a shutdown signal)", "µs", 1, r.forward.relay, floorName, "", nil)
	}
	if r.shutdown != nil {
		sum = append(sum, r.latencySection(&details, fmt.Sprintf("Shutdown: kill(SIGTERM) to PID 1, %v after the child's ready → PID 1 has exited (child dies of SIGTERM; floor: the child as PID 1, exiting on SIGTERM)", r.cfg.settle), "µs", 1, r.shutdown, floorName,
			"shutdown latency added, p50", func(l, best float64) (string, bool) { return "≤ best anchor", l <= best })...)
		sum = append(sum, overDeps("shutdown: lfinit's added p50 − the Go init + deps'", r.shutdown, shutOverDepsUs)...)
	}
	if r.early.trials != nil {
		sum = append(sum, r.earlySection(&details)...)
	}
	maxN := 0
	for _, rr := range r.reap {
		maxN = max(maxN, rr.n)
	}
	for _, rr := range r.reap {
		sum = append(sum, r.reapSection(&details, rr, rr.n == maxN)...)
	}
	if r.idle.wakeups != nil {
		sum = append(sum, r.idleSection(&details)...)
	}
	if r.sizes != nil {
		sum = append(sum, r.sizeSection(&details)...)
	}
	if r.flip != nil {
		sum = append(sum, r.lfinitSection(&details)...)
	}

	w("### Summary: lfinit against the targets\n\n")
	w("The Go floor columns give the floor's figure and, in brackets, lfinit's ÷ it.\n\n")
	t := table{head: []string{"measurement", "lfinit", "best anchor", "lfinit ÷ best", "Go init", "Go init + deps", "target", "verdict"}}
	for _, s := range sum {
		t.add(s.what, s.lfinit, s.best, s.ratio, s.goInit, s.goDeps, s.target, s.verdict)
	}
	w("%s\n", t.String())
	w("%s", details.String())
	return b.String()
}

// latencySection writes the distribution table of one latency and returns
// lfinit's summary row (if summary is set).
func (r *report) latencySection(out *strings.Builder, title, unit string, dec int, res map[string]sample, floor, summary string,
	target func(lfinit, best float64) (string, bool)) []summaryRow {
	fmt.Fprintf(out, "### %s (%s)\n\n", title, unit)
	f := res[floor].dist()
	t := table{head: []string{"contender", "runs", "p50", "p90", "p99", "added p50", "added p90", "added p99", "added p50 ÷ best anchor", "÷ Go init", "÷ Go init + deps"}}
	added := func(n string) float64 {
		if s, ok := res[n]; ok {
			return s.dist().minus(f).p50
		}
		return math.NaN()
	}
	bestName, best := r.bestAnchor(added, false)
	goInit, goDeps := added(goInitName), added(goDepsInitName)
	t.add(floor, fmt.Sprint(len(res[floor])), num(f.p50, dec), num(f.p90, dec), num(f.p99, dec), "", "", "", "", "", "")
	for _, i := range r.inits {
		s, ok := res[i.name]
		if !ok {
			continue
		}
		d := s.dist()
		a := d.minus(f)
		t.add(i.name, fmt.Sprint(len(s)), num(d.p50, dec), num(d.p90, dec), num(d.p99, dec), num(a.p50, dec), num(a.p90, dec), num(a.p99, dec),
			ratio(a.p50, best), ratio(a.p50, goInit), ratio(a.p50, goDeps))
	}
	fmt.Fprintf(out, "%s\n", t.String())
	if summary == "" || target == nil {
		return nil
	}
	s, ok := res["lfinit"]
	if !ok {
		return nil
	}
	l := s.dist().minus(f).p50
	tg, met := target(l, best)
	return []summaryRow{{summary, num(l, dec) + " " + unit, fmt.Sprintf("%s %s (%s)", num(best, dec), unit, bestName), ratio(l, best),
		refCell(goInit, l, dec, unit), refCell(goDeps, l, dec, unit), tg, verdict(met, !math.IsNaN(best))}}
}

// overDeps is the summary row of a stack-floor target: lfinit's added p50
// (µs) minus the added p50 of the Go floor init with lfinit's
// dependencies, at most limit.
func overDeps(what string, res map[string]sample, limit float64) []summaryRow {
	lf, ok1 := res["lfinit"]
	deps, ok2 := res[goDepsInitName]
	if !ok1 || !ok2 {
		return nil
	}
	f := res[floorName].q(0.5)
	d := lf.q(0.5) - deps.q(0.5)
	return []summaryRow{{what, us(d), "", "", "", us(deps.q(0.5)-f) + " added", fmt.Sprintf("≤ %.0f µs", limit), verdict(d <= limit, true)}}
}

// bestAnchor is the anchor with the lowest (or, with high, highest) value.
func (r *report) bestAnchor(val func(name string) float64, high bool) (string, float64) {
	name, best := "", math.NaN()
	for _, i := range r.inits {
		if !i.anchor {
			continue
		}
		v := val(i.name)
		if math.IsNaN(v) {
			continue
		}
		if math.IsNaN(best) || (!high && v < best) || (high && v > best) {
			name, best = i.name, v
		}
	}
	return name, best
}

// reapRun is the reaping result for one orphan count and mode.
type reapRun struct {
	n   int
	res reapResult
}

func (r *report) reapSection(out *strings.Builder, rr reapRun, summarize bool) []summaryRow {
	n, res := rr.n, rr.res
	mode, short := "released at once while the init runs", "released while running"
	if res.burst {
		mode, short = "exited while the init was stopped (SIGSTOP), reaped in one burst after SIGCONT", "burst of zombies"
	}
	fmt.Fprintf(out, "### Reaping: %d orphans %s, until the last is reaped (counted by %s)\n\n", n, mode, res.method)
	t := table{head: []string{"init", "runs", "orphans/s p50", "orphans/s worst", "CPU µs/orphan p50", "CPU µs/orphan worst", "context switches p50", "throughput ÷ best anchor", "÷ Go init", "÷ Go init + deps"}}
	rateOf := func(name string) float64 { return res.rate[name].q(0.5) }
	cpuOf := func(name string) float64 { return res.cpu[name].q(0.5) }
	bestName, best := r.bestAnchor(rateOf, true)
	for _, i := range r.inits {
		s, ok := res.rate[i.name]
		if !ok {
			continue
		}
		c := res.cpu[i.name]
		t.add(i.name, fmt.Sprint(len(s)), num(s.q(0.5), 0), num(slices.Min(s), 0), num(c.q(0.5), 2), num(slices.Max(c), 2), num(res.wakeups[i.name].q(0.5), 0),
			ratio(s.q(0.5), best), ratio(s.q(0.5), rateOf(goInitName)), ratio(s.q(0.5), rateOf(goDepsInitName)))
	}
	fmt.Fprintf(out, "%s\nCPU is the init's own (all threads, from /proc/PID/task/*/schedstat), kernel time in wait4 included: wait4(-1) walks the list of children from the oldest and stops at the first zombie, so every pass that ends a batch costs time in proportion to the orphans still alive, and when orphans exit in another order than they were forked each reap walks past the live ones before it. Context switches are the init's, during the reaping.\n\n", t.String())
	r.reapRuns(out, res)
	if !res.burst {
		r.exitPace(out, n)
	}
	lf, ok := res.rate["lfinit"]
	if !summarize || !ok {
		return nil
	}
	rate, cpu := lf.q(0.5), cpuOf("lfinit")
	_, bestCPU := r.bestAnchor(cpuOf, false)
	return []summaryRow{
		{fmt.Sprintf("reaping throughput, N=%d, %s, p50", n, short), num(rate, 0) + "/s", fmt.Sprintf("%s/s (%s)", num(best, 0), bestName), ratio(rate, best),
			refCell(rateOf(goInitName), rate, 0, "/s"), refCell(rateOf(goDepsInitName), rate, 0, "/s"), "≥ best anchor", verdict(rate >= best, !math.IsNaN(best))},
		{fmt.Sprintf("CPU per orphan, N=%d, %s, p50", n, short), num(cpu, 2) + " µs", num(bestCPU, 2) + " µs", ratio(cpu, bestCPU),
			refCell(cpuOf(goInitName), cpu, 2, "µs"), refCell(cpuOf(goDepsInitName), cpu, 2, "µs"), fmt.Sprintf("≤ %.0f µs", cpuPerOrphan), verdict(cpu <= cpuPerOrphan, true)},
	}
}

// reapRuns lists every run of each init, slowest first: on a small machine
// the runs of one init can differ tenfold, and a p50 alone hides in which
// mode they fell.
func (r *report) reapRuns(out *strings.Builder, res reapResult) {
	out.WriteString("Every run, slowest to fastest: orphans/s (CPU µs per orphan).\n\n")
	for _, i := range r.inits {
		rate, cpu := res.rate[i.name], res.cpu[i.name]
		order := make([]int, len(rate))
		for k := range order {
			order[k] = k
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(rate[a], rate[b]) })
		var runs []string
		for _, k := range order {
			runs = append(runs, fmt.Sprintf("%s (%s)", num(rate[k], 0), num(cpu[k], 1)))
		}
		if len(runs) > 0 {
			fmt.Fprintf(out, "- %s: %s\n", i.name, strings.Join(runs, ", "))
		}
	}
	out.WriteString("\n")
}

// exitPace says how fast the same n orphans exited in the burst runs, with
// the init stopped and nothing reaping: how much the machine's own pace
// varies between runs.
func (r *report) exitPace(out *strings.Builder, n int) {
	for _, rr := range r.reap {
		if rr.n != n || !rr.res.burst || len(rr.res.exits) == 0 {
			continue
		}
		e := rr.res.exits
		fmt.Fprintf(out, "The same %d orphans' exits alone, in the burst runs below (the init stopped, nothing reaping; each orphan there also writes one byte to a FIFO as it exits, which is how the benchmark knows they all have): %s/s p50, slowest %s/s, fastest %s/s over %d runs. That spread is the machine's, with no init at work.\n\n",
			n, num(e.q(0.5), 0), num(slices.Min(e), 0), num(slices.Max(e), 0), len(e))
	}
}

// idleSection writes the idle table and returns lfinit's summary rows.
func (r *report) idleSection(out *strings.Builder) []summaryRow {
	res := r.idle
	fmt.Fprintf(out, "### Idle footprint: %d window(s) of %v after %v of settling, all contenders at once\n\n", r.cfg.idleWindows, r.cfg.idleWindow, r.cfg.idleSettle)
	t := table{head: []string{"contender", "wake-ups/s (median)", "wake-ups/s (worst window)", "RSS (VmRSS) MiB", "RssAnon MiB", "Pss MiB", "threads", "RSS ÷ Go floor", "RSS ÷ Go floor + deps", "Pss ÷ Go floor + deps"}}
	gofloor, godeps := res.rss[goFloorName], res.rss[goDepsFloorName]
	for _, c := range r.idleCands {
		s := res.wakeups[c.name]
		t.add(c.name, num(s.q(0.5), 2), num(slices.Max(s), 2), mib(res.rss[c.name]), mib(res.rssAnon[c.name]), mib(res.pss[c.name]), fmt.Sprint(res.threads[c.name]),
			ratio(res.rss[c.name], gofloor), ratio(res.rss[c.name], godeps), ratio(res.pss[c.name], res.pss[goDepsFloorName]))
	}
	fmt.Fprintf(out, "%s\nWake-ups are the context switches of all the process's threads (voluntary + involuntary) per second. "+
		"RSS and RssAnon are from /proc/PID/status, Pss from /proc/PID/smaps_rollup: a page shared by n processes counts 1/n in each, "+
		"so a binary's file pages shared by every container that runs the same image count once on the node. "+
		"Here lfinit and lfinit --metrics-addr run the same binary at the same time and so share its pages, and the dynamic tini and dumb-init share libc with the rest of the machine. "+
		"lfinit gives back the pages of its binary that its start-up faulted in (internal/startpages); the Go floors do not, which is how lfinit's file-backed RSS can be below that of the Go floor with the deps.\n\n", t.String())
	lw, ok := res.wakeups["lfinit"]
	if !ok {
		return nil
	}
	_, bestW := r.bestAnchor(func(n string) float64 {
		if s, ok := res.wakeups[n]; ok {
			return s.q(0.5)
		}
		return math.NaN()
	}, false)
	rss, rssOn := res.rss["lfinit"], res.rss[lfinitMetricsName]
	mem := func(what string, m map[string]float64, target string, met bool, known bool) summaryRow {
		bestName, best := r.bestAnchor(func(n string) float64 { return orNaN(m, n) }, false)
		l := m["lfinit"]
		return summaryRow{what, mib(l) + " MiB", fmt.Sprintf("%s MiB (%s)", mib(best), bestName), ratio(l, best),
			refCell(orNaN(m, goFloorName)/1024, l/1024, 2, "MiB"), refCell(orNaN(m, goDepsFloorName)/1024, l/1024, 2, "MiB"), target, verdict(met, known)}
	}
	return []summaryRow{
		{"idle wake-ups/s, metrics off", num(lw.q(0.5), 2), num(bestW, 2), "", "", "", "0", verdict(slices.Max(lw) == 0, true)},
		{"idle wake-ups/s, metrics on", num(res.wakeups[lfinitMetricsName].q(0.5), 2), num(bestW, 2), "", "", "", "—", "—"},
		mem("idle RSS (VmRSS), metrics off", res.rss, fmt.Sprintf("≤ %.1f× Go floor", rssRatioToGo), rss <= rssRatioToGo*gofloor, gofloor > 0),
		mem("idle RssAnon, metrics off", res.rssAnon, fmt.Sprintf("≤ %.1f MiB", rssAnonMiB), res.rssAnon["lfinit"] <= rssAnonMiB*1024, res.rssAnon["lfinit"] > 0),
		mem("idle Pss, metrics off", res.pss, "—", false, false),
		{"idle RSS, metrics on", mib(rssOn) + " MiB", "", "", "", "", fmt.Sprintf("< %.0f MiB", rssMetricsMiB), verdict(rssOn < rssMetricsMiB*1024, true)},
	}
}

// sizeRow is one binary's size.
type sizeRow struct {
	name, kind string
	bytes      int64
	anchor     bool
}

func sizes(inits []initSpec, a artifacts) []sizeRow {
	var rows []sizeRow
	add := func(name, path string, anchor bool) {
		fi, err := os.Stat(path)
		if err != nil {
			return
		}
		kind := "static"
		if out, err := exec.Command("file", "-L", path).Output(); err == nil && strings.Contains(string(out), "dynamically linked") {
			kind = "dynamic (needs libc)"
		}
		rows = append(rows, sizeRow{name, kind, fi.Size(), anchor})
	}
	for _, i := range inits {
		if !i.ref {
			add(i.name, i.path, i.anchor)
		}
	}
	add(goFloorName, a.gofloor, false)
	add(goDepsFloorName, a.gofloorDeps, false)
	return rows
}

// sizeSection writes the size table and returns lfinit's summary row.
func (r *report) sizeSection(out *strings.Builder) []summaryRow {
	tags := ""
	if r.tags != "" {
		tags = " -tags " + r.tags
	}
	fmt.Fprintf(out, "### Binary size (lfinit and the Go floors (the one with the deps adds -tags deps): `CGO_ENABLED=0 go build -trimpath -ldflags=\"-s -w\"%s`; anchors: the Debian binaries)\n\n", tags)
	t := table{head: []string{"binary", "linking", "bytes", "MiB"}}
	var lf float64 = math.NaN()
	best, bestName := math.NaN(), ""
	floors := map[string]float64{goFloorName: math.NaN(), goDepsFloorName: math.NaN()}
	for _, s := range r.sizes {
		t.add(s.name, s.kind, fmt.Sprint(s.bytes), num(float64(s.bytes)/(1<<20), 2))
		if s.name == "lfinit" {
			lf = float64(s.bytes) / (1 << 20)
		}
		if _, ok := floors[s.name]; ok {
			floors[s.name] = float64(s.bytes) / (1 << 20)
		}
		if s.anchor && s.kind == "static" && (math.IsNaN(best) || float64(s.bytes)/(1<<20) < best) {
			best, bestName = float64(s.bytes)/(1<<20), s.name
		}
	}
	fmt.Fprintf(out, "%s\n", t.String())
	if math.IsNaN(lf) {
		return nil
	}
	return []summaryRow{{"binary size (static, stripped)", num(lf, 2) + " MiB", fmt.Sprintf("%s MiB (%s, static)", num(best, 2), bestName), ratio(lf, best),
		refCell(floors[goFloorName], lf, 2, "MiB"), refCell(floors[goDepsFloorName], lf, 2, "MiB"), fmt.Sprintf("< %.0f MiB", sizeTargetMiB), verdict(lf < sizeTargetMiB, true)}}
}

// lfinitSection writes lfinit's own measurements and their summary rows.
func (r *report) lfinitSection(out *strings.Builder) []summaryRow {
	fmt.Fprintf(out, "### lfinit only (as PID 1; no anchor has these) (ms)\n\n")
	t := table{head: []string{"measurement", "runs", "p50", "p90", "p99", "max", "target (p99)"}}
	row := func(name string, s sample, target string) {
		d := s.dist()
		t.add(name, fmt.Sprint(len(s)), num(d.p50, 3), num(d.p90, 3), num(d.p99, 3), num(d.max, 3), target)
	}
	row("hard deadline → child dead (SIGKILL lateness), metrics off", r.deadlineOff, fmt.Sprintf("< %.0f ms", deadlineP99Target))
	row(fmt.Sprintf("hard deadline → child dead, metrics on, %d scrapers", r.cfg.scrapers), r.deadlineOn, fmt.Sprintf("< %.0f ms", deadlineP99Target))
	row("SIGTERM → first 503 from /readyz (upper bound)", r.flip, fmt.Sprintf("< %.0f ms", flipP99Target))
	row("one /readyz round trip on loopback (resolution of the line above)", r.flipRTT, "")
	fmt.Fprintf(out, "%s\n", t.String())
	offP99, onP99, flipP99 := r.deadlineOff.q(0.99), r.deadlineOn.q(0.99), r.flip.q(0.99)
	return []summaryRow{
		{"deadline SIGKILL lateness p99, metrics off", num(offP99, 3) + " ms", "", "", "", "", fmt.Sprintf("< %.0f ms", deadlineP99Target), verdict(offP99 < deadlineP99Target, true)},
		{fmt.Sprintf("deadline SIGKILL lateness p99, metrics on + %d scrapers", r.cfg.scrapers), num(onP99, 3) + " ms", "", "", "", "", fmt.Sprintf("< %.0f ms", deadlineP99Target), verdict(onP99 < deadlineP99Target, true)},
		{"readiness flip (SIGTERM → /readyz 503) p99", num(flipP99, 3) + " ms", "", "", "", "", fmt.Sprintf("< %.0f ms", flipP99Target), verdict(flipP99 < flipP99Target, true)},
	}
}

// mib formats KiB as MiB, "—" for missing.
func mib(kib float64) string {
	if kib < 0 {
		return "—"
	}
	return num(kib/1024, 2)
}

// orNaN is m[k], NaN when k is missing or unreadable (negative).
func orNaN(m map[string]float64, k string) float64 {
	if v, ok := m[k]; ok && v >= 0 {
		return v
	}
	return math.NaN()
}

// us formats microseconds.
func us(v float64) string { return num(v, 1) + " µs" }

// cpuModel is the CPU's name from /proc/cpuinfo.
func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// kernel is the running kernel's release.
func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

// goVersion is the toolchain that builds lfinit.
func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

// anchorVersions are the Debian package versions of the anchors.
func anchorVersions() string {
	var parts []string
	for _, p := range []string{"tini", "dumb-init", "catatonit"} {
		out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", p).Output()
		if err == nil {
			parts = append(parts, p+" "+string(out))
		}
	}
	if len(parts) == 0 {
		return "versions unknown"
	}
	return "Debian " + strings.Join(parts, ", ")
}
