package e2e

import (
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
	"github.com/light-fabric/lfinit/readiness"
	"github.com/light-fabric/lfinit/statusfile"
)

// badValue is one value that can never work, with the name the refusal
// must give: the option, or the LFINIT_* variable it came from.
type badValue struct {
	args  []string
	env   []string
	names string
}

// badValues lists at least one such value for every option of a run
// (dir is a scratch directory holding a regular file "file").
func badValues(dir, busy string) []badValue {
	return []badValue{
		{[]string{"--grace", "5"}, nil, "--grace"},
		{[]string{"--grace=-5s"}, nil, "--grace"},
		{[]string{"--floor", "soon"}, nil, "--floor"},
		{[]string{"--drain-delay", "2"}, nil, "--drain-delay"},
		{[]string{"--grace", "5s", "--drain-delay", "5s"}, nil, "--drain-delay"},
		{[]string{"--shutdown-signals", "TERM,KILL"}, nil, "--shutdown-signals"},
		{[]string{"--shutdown-signals="}, nil, "--shutdown-signals"},
		{[]string{"--stop-signal", "TERMINATE"}, nil, "--stop-signal"},
		{[]string{"--deadline-signal", "sometimes"}, nil, "--deadline-signal"},
		{[]string{"--forward-to", "tree"}, nil, "--forward-to"},
		{[]string{"--preserve-fds", "-1"}, nil, "--preserve-fds"},
		{[]string{"--exit-map", "143"}, nil, "--exit-map"},
		{[]string{"--rewrite", "TERM"}, nil, "--rewrite"},
		{[]string{"--parent-death-signal", "NOPE"}, nil, "--parent-death-signal"},
		{[]string{"--pidfile", dir + "/"}, nil, "--pidfile"},
		{[]string{"--pidfile", dir + "/run.pid", "--wait-for", "tree"}, nil, "--pidfile"},
		{[]string{"--pidfile-timeout", "5"}, nil, "--pidfile-timeout"},
		{[]string{"--on-shutdown", "/bin/x --id 1"}, nil, "--on-shutdown"},
		{[]string{"--on-shutdown", "/bin/x"}, nil, "--on-shutdown-timeout"},
		{[]string{"--on-shutdown", "/bin/x", "--on-shutdown-timeout", "5"}, nil, "--on-shutdown-timeout"},
		{[]string{"--grace", "2s", "--on-shutdown", "/bin/x", "--on-shutdown-timeout", "2s"}, nil, "--on-shutdown-timeout"},
		{nil, []string{"LFINIT_ON_SHUTDOWN=[1]"}, "LFINIT_ON_SHUTDOWN"},
		{[]string{"--wait-for", "forever"}, nil, "--wait-for"},
		{[]string{"--warn-on-reap=maybe"}, nil, "--warn-on-reap"},
		{[]string{"--status-file", dir + "/file/status.json"}, nil, "--status-file"},
		{[]string{"--status-file", dir}, nil, "--status-file"},
		{[]string{"--metrics-addr", "127.0.0.1:99999"}, nil, "--metrics-addr"},
		{[]string{"--metrics-addr", "nonsense"}, nil, "--metrics-addr"},
		{[]string{"--metrics-addr", busy}, nil, "--metrics-addr"},
		// Addresses once accepted that could only fail at run time: a
		// port past 65535 or 0, an empty host, an empty job name.
		{[]string{"--ready-tcp=localhost:99999"}, nil, "--ready-tcp"},
		{[]string{"--ready-tcp=127.0.0.1:0"}, nil, "--ready-tcp"},
		{[]string{"--ready-http=http://127.0.0.1:99999/x"}, nil, "--ready-http"},
		{[]string{"--ready-http=http://:99999/"}, nil, "--ready-http"},
		{[]string{"--push-gateway=http://127.0.0.1:99999"}, nil, "--push-gateway"},
		{[]string{"--push-job="}, nil, "--push-job"},
		{[]string{"--ready-tcp", "8080"}, nil, "--ready-tcp"},
		{[]string{"--ready-tcp", "bad_host!:80"}, nil, "--ready-tcp"},
		{[]string{"--ready-http", "localhost:8080"}, nil, "--ready-http"},
		{[]string{"--ready-tcp", "127.0.0.1:1", "--ready-http", "http://x/"}, nil, "--ready-http"},
		{[]string{"--ready-notify", "abstrct"}, nil, "--ready-notify"},
		{[]string{"--ready-notify", dir + "/file"}, nil, "--ready-notify"},
		{[]string{"--watchdog", "5"}, nil, "--watchdog"},
		{[]string{"--watchdog", "5s"}, nil, "--watchdog needs --ready-notify"},
		{[]string{"--ready-notify", "abstract", "--watchdog-action", "kill"}, nil, "--watchdog-action"},
		{[]string{"--termination-log", dir + "/file/termlog"}, nil, "--termination-log"},
		{[]string{"--stop-timeout", "10"}, nil, "--stop-timeout"},
		{[]string{"--stop-timeout", "5s"}, nil, "--stop-timeout"},
		{[]string{"--allowance", "1"}, nil, "--allowance"},
		{[]string{"--log-format", "xml"}, nil, "--log-format"},
		{[]string{"--log-level", "loud"}, nil, "--log-level"},
		{[]string{"--push-gateway", "pushgateway:9091"}, nil, "--push-gateway"},
		{[]string{"--push-grouping", "job=x"}, nil, "--push-grouping"},
		// A grouping value the Pushgateway would store whole (130,000
		// bytes) is refused, and the message names the limit.
		{[]string{"--push-grouping", "cluster=" + strings.Repeat("x", 130000)}, nil,
			`for --push-grouping: the value of label "cluster" is 130000 bytes; the limit is 1 KiB (1024 bytes)`},
		{[]string{"--push-gateway", "http://127.0.0.1:9091", "--push-timeout", "0"}, nil, "--push-timeout"},
		{[]string{"--push-timeout", "1"}, nil, "--push-timeout"},
		{[]string{"--help=maybe"}, nil, "--help"},
		{[]string{"-h=maybe"}, nil, "-h"},
		{[]string{"--version=maybe"}, nil, "--version"},
		{[]string{"--no-such-flag"}, nil, "--no-such-flag"},
		{[]string{"--user", "app:"}, nil, "--user"},
		{[]string{"--user", "no-such-user-here"}, nil, "--user"},
		// The same checks on the variables, which the message names.
		{nil, []string{"LFINIT_GRACE=10"}, "LFINIT_GRACE"},
		{nil, []string{"LFINIT_DEADLINE_SIGNAL=sometimes"}, "LFINIT_DEADLINE_SIGNAL"},
		{nil, []string{"LFINIT_READY_TCP=localhost:80800"}, "LFINIT_READY_TCP"},
		{nil, []string{"LFINIT_READY_HTTP=http://127.0.0.1:0/"}, "LFINIT_READY_HTTP"},
		{nil, []string{"LFINIT_READY_NOTIFY=somewhere"}, "LFINIT_READY_NOTIFY"},
		{nil, []string{"LFINIT_METRICS_ADDR=:99999"}, "LFINIT_METRICS_ADDR"},
		{nil, []string{"LFINIT_PUSH_GATEWAY=http://pgw:0"}, "LFINIT_PUSH_GATEWAY"},
		{nil, []string{"LFINIT_WARN_ON_REAP=maybe"}, "LFINIT_WARN_ON_REAP"},
		{nil, []string{"LFINIT_USER=a:b:c"}, "LFINIT_USER"},
		{nil, []string{"LFINIT_PUSH_GROUPING=a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=1,n=1,o=1,p=1,q=1"},
			"for LFINIT_PUSH_GROUPING: more than 16 grouping labels; the limit is 16"},
	}
}

// TestEveryOptionRefusesABadValue gives every option of a run a value that
// can never work: each is refused with exit 2 and one line that names the
// option and the --help, before the child (touch marker) runs.
func TestEveryOptionRefusesABadValue(t *testing.T) {
	t.Parallel()
	needRoot(t)
	dir := t.TempDir()
	os.WriteFile(dir+"/file", nil, 0o644)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	marker := dir + "/started"
	cases := badValues(dir, busy.Addr().String())
	for _, tc := range cases {
		line := refused(t, tc.env, append(tc.args, "--"), marker)
		if !strings.Contains(line, tc.names) || !strings.HasPrefix(line, "lfinit: ") || !strings.HasSuffix(line, "(see lfinit --help)") {
			t.Errorf("%v %v: want one lfinit: line naming %s and --help, got: %s", tc.env, tc.args, tc.names, line)
		}
	}
	for _, name := range helpOptions(t) {
		if !covered(cases, name) {
			t.Errorf("--%s has no bad value in this test", name)
		}
	}
	out, err := exec.Command(lfinitBin).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no command") {
		t.Errorf("no command: %v %s", err, out)
	}
}

// refused runs lfinit with env and args, then `touch marker` as the command,
// and checks that it exits 2 with one line, before the child starts; it
// returns that line.
func refused(t *testing.T, env, args []string, marker string) string {
	t.Helper()
	cmd := exec.Command(lfinitBin, append(append([]string{}, args...), "touch", marker)...)
	cmd.Env = append(os.Environ(), env...)
	out, _ := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if code := cmd.ProcessState.ExitCode(); code != 2 || len(lines) != 1 {
		t.Errorf("%v %v: exit %d, want 2 and one line:\n%s", env, args, code, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("%v %v: the child was started", env, args)
	}
	return lines[0]
}

// helpOptions are the options lfinit --help lists.
func helpOptions(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command(lfinitBin, "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  --([a-z-]+) `).FindAllStringSubmatch(string(out), -1) {
		names = append(names, m[1])
	}
	if len(names) < 25 {
		t.Fatalf("only %d options in --help:\n%s", len(names), out)
	}
	return names
}

// covered reports whether a case gives the option name a value.
func covered(cases []badValue, name string) bool {
	for _, tc := range cases {
		for _, a := range tc.args {
			if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
				return true
			}
		}
	}
	return false
}

// TestReadinessTargetThatRefusesIsReported runs a readiness check against a
// port nothing listens on, at the default log level: the "still starting"
// line comes after readiness.FirstReminder, and lfinit status shows why.
func TestReadinessTargetThatRefusesIsReported(t *testing.T) {
	long(t)
	t.Parallel()
	addr := measure.FreeAddr(t)
	r := startWith(t, true, []string{"--status-file", "DIR/status.json", "--ready-tcp", addr, "HELPER", "-ready-file", "DIR/ready"},
		[]string{"LFINIT_LOG_LEVEL=info"})
	why := addr + " refuses connections"
	waitFor(t, readiness.FirstReminder+15*time.Second, "the still starting line", func() bool {
		return strings.Contains(r.stderr.String(), `msg="still starting: `+why+" (")
	})
	if took := time.Since(r.begun); took < readiness.FirstReminder {
		t.Errorf("still starting after %v, before the first reminder (%v)", took, readiness.FirstReminder)
	}
	out, err := exec.Command(lfinitBin, "status", "--status-file", r.path("status.json")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "phase:      starting") || !strings.Contains(string(out), "ready error: "+why+"\n") {
		t.Errorf("lfinit status: %v\n%s", err, out)
	}
	if s := readStatus(t, r.path("status.json")); s.ReadyError == nil || *s.ReadyError != why || s.Phase != statusfile.Starting {
		t.Errorf("status file: phase %s, ready_error %v, want %q", s.Phase, s.ReadyError, why)
	}
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want the child's 143", got)
	}
}

// TestStatusFileDirectoryIsCreated: a missing status-file directory is
// created (mode 0755, as mkdir -p), as the README and lfinit(1) say.
func TestStatusFileDirectoryIsCreated(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--status-file", "DIR/run/lfinit/status.json", "true")
	if got := r.wait(10 * time.Second); got != 0 {
		t.Fatalf("exit %d", got)
	}
	fi, err := os.Stat(r.path("run/lfinit"))
	if want := 0o755 &^ umask(t); err != nil || !fi.IsDir() || fi.Mode().Perm() != want {
		t.Fatalf("directory: %v %v, want one with mode %o", fi, err, want)
	}
	if s := readStatus(t, r.path("run/lfinit/status.json")); s.Phase != statusfile.Stopped {
		t.Fatalf("final phase %s", s.Phase)
	}
}

// umask is the test's umask, which lfinit inherits (read, not set: umask(2)
// would change it for the tests running in parallel).
func umask(t *testing.T) os.FileMode {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	m := regexp.MustCompile(`(?m)^Umask:\s*([0-7]+)$`).FindSubmatch(b)
	if err != nil || m == nil {
		t.Fatalf("no Umask in /proc/self/status: %v", err)
	}
	n, _ := strconv.ParseUint(string(m[1]), 8, 32)
	return os.FileMode(n)
}
