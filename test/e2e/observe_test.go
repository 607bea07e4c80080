package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
	"github.com/light-fabric/lfinit/statusfile"
)

// metricsAddr waits for lfinit to log the address it serves metrics on.
func (r *run) metricsAddr() string {
	r.t.Helper()
	re := regexp.MustCompile(`serving metrics and probes.* addr=(\S+)`)
	var addr string
	waitFor(r.t, 10*time.Second, "metrics address in the log", func() bool {
		if m := re.FindStringSubmatch(r.stderr.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	return addr
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func readStatus(t *testing.T, path string) statusfile.Status {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s statusfile.Status
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("status file does not parse: %v\n%s", err, b)
	}
	return s
}

func waitPhase(t *testing.T, path string, p statusfile.Phase) statusfile.Status {
	t.Helper()
	var s statusfile.Status
	waitFor(t, 10*time.Second, "phase "+string(p), func() bool {
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &s) != nil {
			return false
		}
		return s.Phase == p
	})
	return s
}

// probe runs `lfinit probe KIND` against a status file and returns its exit code.
func probe(t *testing.T, kind, path string) int {
	t.Helper()
	cmd := exec.Command(lfinitBin, "probe", kind, "--status-file", path)
	cmd.Run()
	return cmd.ProcessState.ExitCode()
}

func metricValue(body, series string) string {
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// TestPhasesAreObservableEverywhere drives a graceful shutdown with a drain
// delay and checks, in each phase, the status file, /readyz, /metrics and
// the probe subcommand, while a reader hammers the status file.
func TestPhasesAreObservableEverywhere(t *testing.T) {
	long(t)
	t.Parallel()
	r := startPID1(t, "--status-file", "DIR/run/status.json", "--metrics-addr", "127.0.0.1:0", "--termination-log", "DIR/termlog",
		"--drain-delay", "1500ms", "--grace", "6s", "HELPER", "-record", "DIR/rec", "-die-delay", "1500ms", "-ready-file", "DIR/ready")
	status := r.path("run/status.json")
	addr := r.metricsAddr()
	r.waitFile("ready")
	// The helper can write its ready file before lfinit's writer has put
	// the status at ready (an fsync later): the reader starts from there.
	s := waitPhase(t, status, statusfile.Ready)

	// The hammering reader: every read must parse; it records the phases seen.
	var mu sync.Mutex
	var seen []statusfile.Phase
	stop := make(chan struct{})
	readerDone := make(chan error, 1)
	go func() {
		reads := 0
		for last := false; ; {
			select {
			case <-stop:
				// lfinit has exited: one last read sees its final status.
				last = true
			default:
			}
			b, err := os.ReadFile(status)
			if err != nil {
				readerDone <- fmt.Errorf("read: %v", err)
				return
			}
			var s statusfile.Status
			if err := json.Unmarshal(b, &s); err != nil {
				readerDone <- fmt.Errorf("torn or partial status file (%v): %q", err, b)
				return
			}
			reads++
			mu.Lock()
			if len(seen) == 0 || seen[len(seen)-1] != s.Phase {
				seen = append(seen, s.Phase)
			}
			mu.Unlock()
			if last {
				if reads < 100 {
					readerDone <- fmt.Errorf("only %d reads", reads)
					return
				}
				readerDone <- nil
				return
			}
		}
	}()

	if !s.Ready || s.ChildPid == nil || s.StartedAt == nil || s.ReadyAt == nil || s.SignalAt != nil || s.Outcome != nil || s.Version != 1 {
		t.Fatalf("ready status: %+v", s)
	}
	if code, _ := get(t, "http://"+addr+"/readyz"); code != 200 {
		t.Fatalf("/readyz in ready: %d", code)
	}
	if code, _ := get(t, "http://"+addr+"/livez"); code != 200 {
		t.Fatalf("/livez: %d", code)
	}
	_, body := get(t, "http://"+addr+"/metrics")
	if v := metricValue(body, `lfinit_phase{phase="ready"}`); v != "1" {
		t.Fatalf("lfinit_phase ready = %q", v)
	}
	if probe(t, "ready", status) != 0 || probe(t, "live", status) != 0 {
		t.Fatal("probes in ready must pass")
	}

	r.signal(syscall.SIGTERM)
	s = waitPhase(t, status, statusfile.Quiescing)
	if s.Ready || s.SignalAt == nil || s.GraceDeadline == nil || s.HardDeadline == nil || *s.Reason != "terminate" || *s.Signal != "SIGTERM" || s.RemainingSeconds == nil {
		t.Fatalf("quiescing status: %+v", s)
	}
	if d := s.HardDeadline.Sub(*s.SignalAt); d != 6250*time.Millisecond {
		t.Fatalf("hard deadline is t0+%v, want t0+6.25s", d)
	}
	if code, _ := get(t, "http://"+addr+"/readyz"); code != 503 {
		t.Fatalf("/readyz while quiescing: %d, want 503", code)
	}
	_, body = get(t, "http://"+addr+"/metrics")
	if metricValue(body, `lfinit_phase{phase="quiescing"}`) != "1" || metricValue(body, `lfinit_phase{phase="ready"}`) != "0" {
		t.Fatalf("metrics while quiescing:\n%s", grepLines(body, "lfinit_phase"))
	}
	if probe(t, "ready", status) != 1 || probe(t, "live", status) != 0 {
		t.Fatal("while quiescing: probe ready must fail, live pass")
	}
	if n := len(signals(readRecord(t, r.path("rec")), "signal")); n != 0 {
		t.Fatal("the child got a signal while quiescing")
	}

	waitPhase(t, status, statusfile.Draining)
	if code, _ := get(t, "http://"+addr+"/readyz"); code != 503 {
		t.Fatalf("/readyz while draining: %d", code)
	}
	_, body = get(t, "http://"+addr+"/metrics")
	if metricValue(body, `lfinit_phase{phase="draining"}`) != "1" || metricValue(body, `lfinit_signals_forwarded_total{signal="SIGTERM"}`) != "1" {
		t.Fatalf("metrics while draining:\n%s", grepLines(body, "lfinit_"))
	}
	out, err := exec.Command(lfinitBin, "status", "--status-file", status).Output()
	if err != nil || !strings.Contains(string(out), "phase:      draining") || !strings.Contains(string(out), "reason:     terminate (SIGTERM)") {
		t.Fatalf("lfinit status while draining: %v\n%s", err, out)
	}

	if got := r.wait(15 * time.Second); got != 143 {
		t.Fatalf("exit %d, want 143", got)
	}
	close(stop)
	if err := <-readerDone; err != nil {
		t.Fatal(err)
	}
	s = readStatus(t, status)
	if s.Phase != statusfile.Stopped || s.Outcome == nil || *s.Outcome != statusfile.Graceful || s.ExitCode == nil || *s.ExitCode != 143 {
		t.Fatalf("final status: %+v", s)
	}
	mu.Lock()
	want := []statusfile.Phase{statusfile.Ready, statusfile.Quiescing, statusfile.Draining, statusfile.Stopped}
	if !slices.Equal(seen, want) && !slices.Equal(seen, []statusfile.Phase{statusfile.Ready, statusfile.Quiescing, statusfile.Draining, statusfile.CleaningUp, statusfile.Stopped}) {
		t.Fatalf("the reader saw phases %v, want %v", seen, want)
	}
	mu.Unlock()
	if probe(t, "live", status) != 1 {
		t.Fatal("probe live after stop must fail")
	}
	term, _ := os.ReadFile(r.path("termlog"))
	if !strings.Contains(string(term), "outcome=graceful") || !strings.Contains(string(term), "exit_code=143") || len(term) >= 1024 {
		t.Fatalf("termination message: %q", term)
	}
}

func grepLines(body, prefix string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestDeadlineExceededIsPublished(t *testing.T) {
	long(t)
	t.Parallel()
	r := startPID1(t, "--status-file", "DIR/status.json", "--metrics-addr", "127.0.0.1:0", "--termination-log", "DIR/termlog",
		"--grace", "500ms", "--floor", "300ms", "HELPER", "-ignore", "15", "-children", "1", "-children-ignore-term", "-ready-file", "DIR/ready")
	addr := r.metricsAddr()
	r.waitFile("ready")
	r.signal(syscall.SIGTERM)
	// Scrape while the deadline runs out: the kill must not wait for it.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-r.done:
				return
			default:
			}
			if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
	if got := r.wait(10 * time.Second); got != 1 {
		t.Fatalf("exit %d, want 1", got)
	}
	<-done
	s := readStatus(t, r.path("status.json"))
	if *s.Outcome != statusfile.DeadlineExceeded || *s.ExitCode != 1 || s.Killed < 2 || len(s.StillRunning) < 2 {
		t.Fatalf("final status: %+v", s)
	}
	term, _ := os.ReadFile(r.path("termlog"))
	if !strings.Contains(string(term), "outcome=deadline-exceeded") || !strings.Contains(string(term), "helper[") {
		t.Fatalf("termination message: %q", term)
	}
}

func TestReadinessGating(t *testing.T) {
	long(t)
	t.Parallel()
	target := measure.FreeAddr(t)
	r := startPID1(t, "--status-file", "DIR/status.json", "--metrics-addr", "127.0.0.1:0", "--ready-tcp", target,
		"HELPER", "-record", "DIR/rec", "-listen", target, "-listen-after", "800ms")
	addr := r.metricsAddr()
	s := waitPhase(t, r.path("status.json"), statusfile.Starting)
	if s.Ready {
		t.Fatal("ready while starting")
	}
	if code, _ := get(t, "http://"+addr+"/readyz"); code != 503 {
		t.Fatalf("/readyz while starting: %d", code)
	}
	s = waitPhase(t, r.path("status.json"), statusfile.Ready)
	var listening time.Time
	for _, e := range readRecord(t, r.path("rec")) {
		if f := strings.Fields(e.line); e.kind == "listening" && len(f) == 3 {
			ns, _ := strconv.ParseInt(f[2], 10, 64)
			listening = time.Unix(0, ns)
		}
	}
	if listening.IsZero() || s.ReadyAt == nil || s.ReadyAt.Before(listening) {
		t.Fatalf("lfinit said ready at %v, the child listened at %v", s.ReadyAt, listening)
	}
	if code, _ := get(t, "http://"+addr+"/readyz"); code != 200 {
		t.Fatalf("/readyz when ready: %d", code)
	}
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d", got)
	}

	// An HTTP check that never passes: a shutdown is a startup abort, floor only.
	r = startPID1(t, "--status-file", "DIR/status.json", "--ready-http", "http://"+measure.FreeAddr(t)+"/healthz", "--grace", "20s", "--floor", "400ms",
		"--drain-delay", "5s", "HELPER", "-ignore", "15", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	waitPhase(t, r.path("status.json"), statusfile.Starting)
	sent := time.Now()
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 1 {
		t.Fatalf("startup abort of a child ignoring TERM: exit %d, want 1", got)
	}
	between(t, "startup abort", time.Since(sent), 300*time.Millisecond, 2*time.Second)
	if !strings.Contains(r.stderr.String(), "phase=aborting-startup") {
		t.Fatalf("no aborting-startup phase:\n%s", r.stderr.String())
	}
}

func TestStatusFileLostMidRunIsNotFatal(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--status-file", "DIR/sub/status.json", "HELPER", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	waitPhase(t, r.path("sub/status.json"), statusfile.Ready)
	os.RemoveAll(r.path("sub"))
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want the child's 143", got)
	}
	if !strings.Contains(r.stderr.String(), "cannot write the status file") {
		t.Fatalf("the failed write was not logged:\n%s", r.stderr.String())
	}
}

func TestBudgetSubcommand(t *testing.T) {
	t.Parallel()
	needRoot(t)
	out, err := exec.Command(lfinitBin, "budget", "--grace", "20s", "--drain-delay", "5s", "--stop-timeout", "30s").Output()
	if err != nil || !strings.Contains(string(out), "fits") || !strings.Contains(string(out), "terminationGracePeriodSeconds: 22") {
		t.Fatalf("budget that fits: %v\n%s", err, out)
	}
	cmd := exec.Command(lfinitBin, "budget", "--stop-timeout", "8s")
	out, _ = cmd.Output()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "TOO SHORT") || !strings.Contains(string(out), "terminationGracePeriodSeconds: 10") {
		t.Fatalf("budget that does not fit: exit %d\n%s", cmd.ProcessState.ExitCode(), out)
	}
	cmd = exec.Command(lfinitBin, "budget")
	cmd.Env = append(os.Environ(), "LFINIT_GRACE=30s", "LFINIT_STOP_TIMEOUT=20s")
	out, _ = cmd.Output()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "t0+30.25s") {
		t.Fatalf("budget from the environment: exit %d\n%s", cmd.ProcessState.ExitCode(), out)
	}
	// `lfinit -- status` runs a program called status, not the subcommand.
	cmd = exec.Command(lfinitBin, "--", "status")
	cmd.Env = append(os.Environ(), "PATH=/nonexistent")
	cmd.Run()
	if cmd.ProcessState.ExitCode() != 127 {
		t.Fatalf("lfinit -- status: exit %d, want 127 (no program called status)", cmd.ProcessState.ExitCode())
	}
}
