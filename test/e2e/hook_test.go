package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
	"github.com/light-fabric/lfinit/statusfile"
)

// registry is a service registry as a router sees it: while the service
// is registered the router sends it traffic; GET /deregister (the hook)
// removes it, answering after slow, as a real registry round trip does.
type registry struct {
	url  string
	slow time.Duration
	mu   sync.Mutex
	gone time.Time // when the service was deregistered; zero while registered
}

func newRegistry(t *testing.T, slow time.Duration) *registry {
	t.Helper()
	reg := &registry{slow: slow}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reg.mu.Lock()
		reg.gone = time.Now()
		reg.mu.Unlock()
		time.Sleep(reg.slow)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	reg.url = "http://" + l.Addr().String() + "/deregister"
	return reg
}

// deregistered is when the service left the registry, zero while it is in.
func (reg *registry) deregistered() time.Time {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return reg.gone
}

// routed is what a router sent the service: every request, and those that
// failed (a closed listener), until the registry dropped the service.
type routed struct {
	last     time.Time
	n, fails int
}

// route sends the service at addr a request every 5ms while reg has it;
// it closes first once the service has answered one.
func route(reg *registry, addr string, first chan<- struct{}, done chan<- routed) {
	var r routed
	client := &http.Client{Timeout: time.Second}
	for reg.deregistered().IsZero() {
		resp, err := client.Get("http://" + addr + "/")
		r.n++
		r.last = time.Now()
		if err != nil {
			r.fails++
		} else {
			resp.Body.Close()
			if first != nil {
				close(first)
				first = nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	done <- r
}

// hookArg is --on-shutdown's JSON array for the helper with args.
func hookArg(args ...string) string {
	return `["HELPER","-record","DIR/hook"` + func() string {
		var b strings.Builder
		for _, a := range args {
			b.WriteString("," + strconv.Quote(a))
		}
		return b.String()
	}() + "]"
}

func recordedAt(t *testing.T, evs []event, kind string) time.Time {
	t.Helper()
	for _, e := range evs {
		if e.kind == kind {
			f := strings.Fields(e.line)
			ns, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
			return time.Unix(0, ns)
		}
	}
	t.Fatalf("no %s in the record", kind)
	return time.Time{}
}

func expectHookStatus(t *testing.T, s statusfile.Status, outcome statusfile.HookOutcome, code int) {
	t.Helper()
	if s.HookOutcome == nil || *s.HookOutcome != outcome || s.HookExitCode == nil || *s.HookExitCode != code || s.HookDurationSeconds == nil {
		t.Fatalf("status: hook %v code %v duration %v, want %s and %d", s.HookOutcome, s.HookExitCode, s.HookDurationSeconds, outcome, code)
	}
}

// The hook deregisters the service before the child gets its stop
// signal, and the stop waits for the hook (longer than the drain delay):
// the router stops sending before the child closes its listener, and not
// one routed request fails.
func TestHookDeregistersBeforeTheStop(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, 500*time.Millisecond)
	addr := measure.FreeAddr(t)
	r := startPID1(t, "--grace", "5s", "--drain-delay", "200ms", "--on-shutdown-timeout", "3s", "--status-file", "DIR/status.json",
		"--on-shutdown", hookArg("-request", reg.url, "-exit", "0"),
		"HELPER", "-record", "DIR/rec", "-listen", addr, "-die-delay", "300ms")
	waitFor(t, 10*time.Second, "the child's listener", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	first, done := make(chan struct{}), make(chan routed, 1)
	go route(reg, addr, first, done)
	<-first // the router sends the service traffic
	sent := time.Now()
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want the child's 143\n%s", got, r.stderr.String())
	}
	rt := <-done
	evs := readRecord(t, r.path("rec"))
	// The child closes its listener only when it dies, 300ms after its TERM.
	term := firstSignal(t, evs, "signal", 15)
	gone := reg.deregistered()
	if rt.fails > 0 || rt.n == 0 {
		t.Fatalf("routed %d requests, %d failed", rt.n, rt.fails)
	}
	if hookAt := recordedAt(t, readRecord(t, r.path("hook")), "request"); !gone.Before(term) || !hookAt.Before(term) || !rt.last.Before(term) {
		t.Fatalf("order: deregistered %v, the hook's answer %v, last routed %v, child's TERM %v (from the signal)",
			gone.Sub(sent), hookAt.Sub(sent), rt.last.Sub(sent), term.Sub(sent))
	}
	// The hook took the registry's 500ms, past the 200ms drain delay: the stop waited for it.
	between(t, "deregistration to the child's TERM", term.Sub(gone), 450*time.Millisecond, 1500*time.Millisecond)
	expectHookStatus(t, readStatus(t, r.path("status.json")), statusfile.HookSucceeded, 0)
	if !logLine(r.stderr.String(), `level=INFO msg="shutdown hook ended"`, "outcome=succeeded exit_code=0") {
		t.Fatalf("no INFO line of the hook's end:\n%s", r.stderr.String())
	}
}

// A hook that hangs is killed at its timeout, with what it started in its
// process group (a child that ignores SIGTERM), and the child's shutdown
// goes on at once, well inside the budget.
func TestHookThatHangsIsKilledAtItsTimeout(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--grace", "4s", "--on-shutdown-timeout", "500ms", "--status-file", "DIR/status.json",
		"--on-shutdown", hookArg("-children", "1", "-children-ignore-term"),
		"HELPER", "-record", "DIR/rec", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	sent := time.Now()
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want the child's 143\n%s", got, r.stderr.String())
	}
	term := firstSignal(t, readRecord(t, r.path("rec")), "signal", 15)
	between(t, "TERM to the child's TERM", term.Sub(sent), 450*time.Millisecond, 1500*time.Millisecond)
	// The hook's child ignores SIGTERM: only the group's SIGKILL ends it
	// before the hard deadline (4.25s).
	between(t, "the whole run after TERM", time.Since(sent), 450*time.Millisecond, 3*time.Second)
	s := readStatus(t, r.path("status.json"))
	expectHookStatus(t, s, statusfile.HookTimedOut, 137)
	if *s.Outcome != statusfile.Graceful || s.Killed != 0 {
		t.Fatalf("outcome %s, killed %d: the hook's kill is not the tree's", *s.Outcome, s.Killed)
	}
	if !strings.Contains(r.stderr.String(), "shutdown hook killed at its timeout") {
		t.Fatalf("no WARN of the kill:\n%s", r.stderr.String())
	}
}

// A hook that fails is reported (log, status file, termination message),
// and lfinit exits with the child's code, mapped.
func TestHookThatFailsKeepsTheChildsCode(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--drain-delay", "1s", "--exit-map", "143=0", "--status-file", "DIR/status.json", "--termination-log", "DIR/term",
		"--on-shutdown", hookArg("-exit", "3"),
		"HELPER", "-record", "DIR/rec", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 0 {
		t.Fatalf("exit %d, want the child's 143 mapped to 0\n%s", got, r.stderr.String())
	}
	expectHookStatus(t, readStatus(t, r.path("status.json")), statusfile.HookFailed, 3)
	term := readFile(t, r.path("term"))
	if !strings.Contains(term, "outcome=graceful exit_code=0") || !strings.Contains(term, "hook=failed hook_exit_code=3") {
		t.Fatalf("termination message %q", term)
	}
	if !logLine(r.stderr.String(), `level=WARN msg="shutdown hook ended"`, "outcome=failed exit_code=3") {
		t.Fatalf("no WARN of the hook's failure:\n%s", r.stderr.String())
	}
}

// A second shutdown signal during the hook kills it at once and forwards
// the stop signal at once.
func TestSecondSignalDuringTheHook(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--grace", "8s", "--on-shutdown-timeout", "6s", "--status-file", "DIR/status.json",
		"--on-shutdown", hookArg(),
		"HELPER", "-record", "DIR/rec", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.signal(syscall.SIGTERM)
	recordedKind(t, r.path("hook"), "start")
	second := time.Now()
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want 143\n%s", got, r.stderr.String())
	}
	term := firstSignal(t, readRecord(t, r.path("rec")), "signal", 15)
	between(t, "second TERM to the child's TERM", term.Sub(second), 0, 500*time.Millisecond)
	expectHookStatus(t, readStatus(t, r.path("status.json")), statusfile.HookCutShort, 137)
}

// recordedKind waits until the record at path has a line starting with kind.
func recordedKind(t *testing.T, path, kind string) {
	t.Helper()
	waitFor(t, 5*time.Second, fmt.Sprintf("%s in %s", kind, path), func() bool {
		b, _ := readFileErr(path)
		return strings.HasPrefix(b, kind+" ") || strings.Contains(b, "\n"+kind+" ")
	})
}

func readFileErr(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	s, err := readFileErr(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// logLine reports whether one line of log has every one of parts.
func logLine(log string, parts ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
