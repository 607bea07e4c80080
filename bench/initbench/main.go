// Command initbench runs lfinit and the Debian builds of tini, tini-static,
// dumb-init and catatonit side by side, each as PID 1 of a fresh PID
// namespace (unshare --pid --fork --mount-proc), interleaved round by round
// so that they share the machine's noise, and prints a markdown report:
// startup+exit overhead, signal-forwarding and shutdown latency, zombie
// reaping throughput, idle footprint, binary size, and lfinit's own
// deadline accuracy and readiness flip.
//
// It needs root (for the PID namespaces and a pids cgroup) and gcc; run it
// from the repository root through bench/run, or: go run ./bench/initbench.
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// initSpec is one init under test.
type initSpec struct {
	name   string
	argv   []string // binary and options; the child follows
	path   string   // the binary, for its size
	anchor bool     // one of the inits lfinit is compared with
	ref    bool     // a Go floor init: a reference, not a contender
}

// config is how much of everything to run.
type config struct {
	startupRounds, warmup  int
	fwdRounds, relays      int
	shutRounds             int
	settle                 time.Duration
	reapNs                 []int
	reapReps               int
	idleSettle, idleWindow time.Duration
	idleWindows            int
	deadlineRuns, scrapers int
	flips                  int
	earlyRounds            int
	earlyLostAfter         time.Duration
}

var (
	full = config{
		startupRounds: 300, warmup: 10,
		fwdRounds: 200, relays: 3,
		shutRounds: 200,
		settle:     10 * time.Millisecond,
		reapNs:     []int{5000, 20000}, reapReps: 7,
		idleSettle: 2 * time.Second, idleWindow: 10 * time.Second, idleWindows: 3,
		deadlineRuns: 200, scrapers: 4,
		flips:       200,
		earlyRounds: 200, earlyLostAfter: 2 * time.Second,
	}
	quick = config{
		startupRounds: 10, warmup: 2,
		fwdRounds: 5, relays: 2,
		shutRounds: 5,
		settle:     10 * time.Millisecond,
		reapNs:     []int{500, 2000}, reapReps: 1,
		idleSettle: 500 * time.Millisecond, idleWindow: 2 * time.Second, idleWindows: 1,
		deadlineRuns: 3, scrapers: 4,
		flips:       5,
		earlyRounds: 3, earlyLostAfter: time.Second,
	}
)

// variants are extra builds of lfinit run as contenders (name=path).
type variants []string

// String lists the variants, for the flag package.
func (v *variants) String() string { return strings.Join(*v, ",") }

// Set adds one NAME=PATH.
func (v *variants) Set(s string) error { *v = append(*v, s); return nil }

func main() {
	isQuick := flag.Bool("quick", false, "smoke run: tiny counts, well under a minute")
	only := flag.String("only", "", "comma-separated sections to run: startup,forward,shutdown,early,reap,idle,size,lfinit (default all)")
	lfinitPath := flag.String("lfinit", "", "use this lfinit binary instead of building ./cmd/lfinit")
	tags := flag.String("tags", "", "build tags for lfinit, as it ships (e.g. nethttpomithttp2)")
	var extra variants
	flag.Var(&extra, "variant", "also run another lfinit build, NAME=PATH (repeatable; e.g. a patched copy)")
	out := flag.String("o", "", "also write the report to this file")
	seed := flag.Uint64("seed", 1, "seed of the interleaving order")
	shown := flag.String("cmd", "", "the command line to print in the report (set by bench/run)")
	rounds := flag.Int("rounds", 0, "override the rounds of the startup, forwarding and shutdown runs")
	reapNs := flag.String("reap-n", "", "override the orphan counts, e.g. 5000,20000")
	reapReps := flag.Int("reap-reps", 0, "override the repetitions of each reaping run")
	flag.StringVar(&stderrMode, "stderr", "null", "where every PID 1's stderr goes: null (/dev/null), file (a regular file in the run's temp dir), pipe (a pipe the benchmark drains) or tty (a pseudo-terminal whose master the benchmark drains); an init whose lines are read keeps its own pipe, and the startup and early-stop runs keep /dev/null")
	toFile := flag.Bool("stderr-file", false, "deprecated: the same as -stderr file")
	earlyRounds := flag.Int("early-rounds", 0, "override the rounds of the early-stop run (one trial of each init a round)")
	inPlace := flag.Bool("in-place", false, "run every Go init from where it is, not from a copy on tmpfs (to measure how the page cache holds each binary)")
	settle := flag.Duration("settle", 0, "override how long every init idles after its child's ready before the forwarding and shutdown runs signal it (default 10ms; lfinit settles after 1s)")
	anchors := flag.String("anchors", "tini,tini-static,dumb-init,catatonit", "the anchors to run, comma-separated")
	flag.Parse()

	cfg := full
	if *isQuick {
		cfg = quick
	}
	if *rounds > 0 {
		cfg.startupRounds, cfg.fwdRounds, cfg.shutRounds = *rounds, *rounds, *rounds
	}
	if *earlyRounds > 0 {
		cfg.earlyRounds = *earlyRounds
	}
	if *reapReps > 0 {
		cfg.reapReps = *reapReps
	}
	if *reapNs != "" {
		cfg.reapNs = nil
		for _, s := range strings.Split(*reapNs, ",") {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				fail("bad -reap-n %q", *reapNs)
			}
			cfg.reapNs = append(cfg.reapNs, n)
		}
	}
	if *settle > 0 {
		cfg.settle = *settle
	}
	setStderr(*toFile)
	sections := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		if s != "" {
			sections[s] = true
		}
	}
	want := func(s string) bool { return len(sections) == 0 || sections[s] }

	if os.Geteuid() != 0 {
		fail("needs root: every init runs as PID 1 of a new PID namespace (unshare --pid)")
	}
	if out, err := exec.Command(nsPrefix[0], append(nsPrefix[1:], "true")...).CombinedOutput(); err != nil {
		fail("unshare --pid --fork --mount-proc does not work here: %v %s", err, out)
	}
	root, err := repoRoot()
	check(err)
	dir, err := os.MkdirTemp("", "initbench-")
	check(err)
	defer os.RemoveAll(dir)
	if stderrMode == "file" {
		stderrFile = filepath.Join(dir, "stderr.log")
	}
	art, err := build(root, dir, *lfinitPath, *tags)
	if err != nil {
		os.RemoveAll(dir)
		fail("%v", err)
	}
	inits, missing := findInits(art, extra, strings.Split(*anchors, ","))
	placed := ""
	if !*inPlace {
		placed = tmpfsDir()
	}
	if placed != "" {
		defer os.RemoveAll(placed)
		if err := placeOnTmpfs(inits, placed); err != nil {
			os.RemoveAll(dir)
			os.RemoveAll(placed)
			fail("copying the Go inits to tmpfs: %v", err)
		}
	} else if !*inPlace {
		progress("/dev/shm is not tmpfs: the Go inits run from where they were built")
	}
	// The benchmark allocates little; a collection in the middle of a
	// timed stretch is noise it does not need.
	debug.SetGCPercent(-1)

	rng := rand.New(rand.NewPCG(*seed, 0x6c66696e6974))
	r := &report{cfg: cfg, inits: inits, missing: missing, cmd: *shown, tags: *tags, stderr: stderrMode, tmpfs: placed != "", started: time.Now(), loadStart: loadavg()}
	if r.cmd == "" {
		r.cmd = "go run ./bench/initbench " + strings.Join(os.Args[1:], " ")
	}
	step := func(name string, f func() error) {
		if !want(name) {
			return
		}
		t := time.Now()
		progress("%s…", name)
		if err := f(); err != nil {
			os.RemoveAll(dir)
			os.RemoveAll(placed) // "" removes nothing
			fail("%s: %v", name, err)
		}
		progress("%s done in %.1fs", name, time.Since(t).Seconds())
	}
	step("size", func() error { r.sizes = sizes(inits, art); return nil })
	step("startup", func() error {
		cs := withFloor(inits)
		cs[0].name = plainName
		var err error
		r.startup, err = benchStartup(rng, cs, cfg.startupRounds, cfg.warmup)
		return err
	})
	step("forward", func() error {
		var err error
		r.forward, err = benchForward(rng, withFloor(inits), cfg.fwdRounds, cfg.relays, cfg.settle, art.sigwait)
		return err
	})
	step("shutdown", func() error {
		var err error
		r.shutdown, err = benchShutdown(rng, withFloor(inits), cfg.shutRounds, cfg.settle, art.sigwait, art.pause)
		return err
	})
	step("early", func() error {
		var err error
		r.early, err = benchEarly(rng, inits, cfg.earlyRounds, art.pause, cfg.earlyLostAfter)
		return err
	})
	// Latencies, like the sections above: measured before the reaping
	// storms rather than in their wake.
	step("lfinit", func() error {
		var err error
		if r.deadlineOff, err = benchDeadline(art.lfinit, art.pause, art.deathtime, dir, cfg.deadlineRuns, 0); err != nil {
			return err
		}
		if r.deadlineOn, err = benchDeadline(art.lfinit, art.pause, art.deathtime, dir, cfg.deadlineRuns, cfg.scrapers); err != nil {
			return err
		}
		r.flip, r.flipRTT, err = benchFlip(art.lfinit, art.pause, cfg.flips)
		return err
	})
	step("reap", func() error {
		for _, burst := range []bool{false, true} {
			for _, n := range cfg.reapNs {
				res, err := benchReap(rng, inits, n, cfg.reapReps, burst, art.orphans, dir)
				if err != nil {
					return err
				}
				r.reap = append(r.reap, reapRun{n, res})
			}
		}
		return nil
	})
	step("idle", func() error {
		var cs []cand
		for _, i := range inits {
			if i.ref {
				continue
			}
			cs = append(cs, cand{name: i.name, prefix: i.argv})
			if i.name == "lfinit" {
				cs = append(cs, cand{name: lfinitMetricsName, prefix: append([]string{i.path, "--metrics-addr", "127.0.0.1:0"}, i.argv[1:]...)})
			}
		}
		cs = append(cs, cand{name: goFloorName, prefix: []string{art.gofloor}, noChild: true},
			cand{name: goDepsFloorName, prefix: []string{art.gofloorDeps}, noChild: true})
		var err error
		r.idle, err = benchIdle(cs, art.pause, cfg.idleSettle, cfg.idleWindow, cfg.idleWindows)
		r.idleCands = cs
		return err
	})
	r.loadEnd = loadavg()
	r.took = time.Since(r.started)
	text := r.String()
	fmt.Print(text)
	if *out != "" {
		check(os.WriteFile(*out, []byte(text), 0o644))
	}
}

// setStderr checks -stderr and applies -stderr-file, its deprecated alias
// for file (named by the command line of bench/RESULTS-stderr-file.md).
func setStderr(toFile bool) {
	if _, ok := stderrModes[stderrMode]; !ok {
		fail("bad -stderr %q: want null, file, pipe or tty", stderrMode)
	}
	if toFile {
		if stderrMode != "null" && stderrMode != "file" {
			fail("-stderr-file is -stderr file, which -stderr %s contradicts", stderrMode)
		}
		stderrMode = "file"
	}
}

// artifacts are the binaries a run uses.
type artifacts struct {
	lfinit, gofloor, gofloorDeps, sigwait, pause, orphans, deathtime string
}

// build makes lfinit as it ships (static, stripped), the Go floor with and
// without lfinit's dependencies (the same flags and tags), and the C children.
func build(root, dir, lfinitPath, tags string) (artifacts, error) {
	a := artifacts{
		lfinit: filepath.Join(dir, "lfinit"), gofloor: filepath.Join(dir, "gofloor"), gofloorDeps: filepath.Join(dir, "gofloor-deps"),
		sigwait: filepath.Join(dir, "sigwait"), pause: filepath.Join(dir, "pause"), orphans: filepath.Join(dir, "orphans"),
		deathtime: filepath.Join(dir, "deathtime"),
	}
	goBuild := func(out, pkg, tags string) error {
		args := []string{"build", "-trimpath", "-ldflags=-s -w", "-tags=" + tags, "-o", out}
		if pkg == "./cmd/lfinit" {
			// As scripts/build ships it: protobuf without inlining.
			args = append(args, "-gcflags=google.golang.org/protobuf/...=-l")
		}
		cmd := exec.Command("go", append(args, pkg)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
		}
		return nil
	}
	if lfinitPath != "" {
		p, err := filepath.Abs(lfinitPath)
		if err != nil {
			return a, err
		}
		a.lfinit = p
	} else if err := goBuild(a.lfinit, "./cmd/lfinit", tags); err != nil {
		return a, err
	}
	if err := goBuild(a.gofloor, "./bench/gofloor", tags); err != nil {
		return a, err
	}
	if err := goBuild(a.gofloorDeps, "./bench/gofloor", strings.Trim(tags+",deps", ",")); err != nil {
		return a, err
	}
	for _, c := range []string{"sigwait", "pause", "orphans", "deathtime"} {
		src := filepath.Join(root, "bench", "csrc", c+".c")
		if b, err := exec.Command("gcc", "-static", "-O2", "-o", filepath.Join(dir, c), src).CombinedOutput(); err != nil {
			return a, fmt.Errorf("gcc %s (is gcc with static glibc installed?): %v\n%s", src, err, b)
		}
	}
	return a, nil
}

// findInits lists lfinit, its variants, the Go floor inits (bare and with
// lfinit's dependencies), and the anchors that are installed.
func findInits(a artifacts, extra variants, anchors []string) ([]initSpec, []string) {
	inits := []initSpec{{name: "lfinit", argv: []string{a.lfinit, "--"}, path: a.lfinit}}
	for _, v := range extra {
		name, path, ok := strings.Cut(v, "=")
		if !ok {
			fail("bad -variant %q: want NAME=PATH", v)
		}
		p, err := filepath.Abs(path)
		check(err)
		inits = append(inits, initSpec{name: name, argv: []string{p, "--"}, path: p})
	}
	inits = append(inits, initSpec{name: goInitName, argv: []string{a.gofloor, "--"}, path: a.gofloor, ref: true},
		initSpec{name: goDepsInitName, argv: []string{a.gofloorDeps, "--"}, path: a.gofloorDeps, ref: true})
	var missing []string
	for _, a := range []struct {
		name, bin string
		opts      []string
	}{
		{"tini", "tini", []string{"--"}},
		{"tini-static", "tini-static", []string{"--"}},
		{"dumb-init", "dumb-init", nil},
		{"catatonit", "catatonit", []string{"--"}},
	} {
		if !slices.Contains(anchors, a.name) {
			continue
		}
		p, err := exec.LookPath(a.bin)
		if err != nil {
			missing = append(missing, a.name)
			continue
		}
		inits = append(inits, initSpec{name: a.name, argv: append([]string{p}, a.opts...), path: p, anchor: true})
	}
	if len(missing) > 0 {
		progress("not installed, left out: %s (scripts/install-bench-deps installs them)", strings.Join(missing, ", "))
	}
	return inits, missing
}

// repoRoot is the directory of lfinit's go.mod, at or above the current one.
func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/light-fabric/lfinit") {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("run from inside the lfinit repository (no go.mod of github.com/light-fabric/lfinit found)")
		}
		d = parent
	}
}

// loadavg is /proc/loadavg's three averages, to show how busy the machine was.
func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

var progressOut io.Writer = os.Stderr

// progress reports on stderr, away from the report.
func progress(format string, a ...any) {
	fmt.Fprintf(progressOut, "initbench: "+format+"\n", a...)
}

// check fails on err.
func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

// fail prints the reason and exits 1.
func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "initbench: "+format+"\n", a...)
	os.Exit(1)
}
