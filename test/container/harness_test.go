package container

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/memdir"
)

// podman runs podman for a test and fails it on error.
func podman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := podmanCmd(time.Minute, args...)
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// ctr is one container under test; dir is mounted at /rec in it.
type ctr struct {
	t    *testing.T
	name string
	dir  string
}

var nameRE = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// run starts a detached container from image with podman run options
// opts and command line args (after the image), and removes it when the
// test ends. The network is none: nothing here leaves loopback.
func run(t *testing.T, image string, opts []string, args ...string) *ctr {
	t.Helper()
	return runFiles(t, image, nil, opts, args...)
}

// runFiles is run with files as podman's descriptors 3, 4, … (for
// --preserve-fds).
func runFiles(t *testing.T, image string, files []*os.File, opts []string, args ...string) *ctr {
	t.Helper()
	needPodman(t)
	c := &ctr{t: t, name: "lfq-" + strings.ToLower(nameRE.ReplaceAllString(t.Name(), "-")), dir: memdir.New(t)}
	if len(c.name) > 60 {
		c.name = c.name[:60]
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := podmanCmd(30*time.Second, "logs", c.name)
			t.Logf("podman logs %s:\n%s", c.name, out)
			if rec, err := os.ReadFile(c.path("record")); err == nil {
				t.Logf("helper record:\n%s", rec)
			}
		}
		podmanCmd(time.Minute, "rm", "--force", "--time", "0", c.name)
	})
	cmd := []string{"run", "--detach", "--name", c.name, "--network", "none", "--volume", c.dir + ":/rec"}
	if !strings.Contains(strings.Join(opts, " "), "VERBOSITY") {
		// The tests read the whole story, which the default level keeps quiet.
		cmd = append(cmd, "--env", "LFINIT_LOG_LEVEL=debug")
	}
	cmd = append(cmd, opts...)
	cmd = append(cmd, image)
	cmd = append(cmd, args...)
	if out, err := podmanFiles(time.Minute, files, cmd...); err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(cmd, " "), err, out)
	}
	return c
}

// path is a file of the container's /rec, seen from the host.
func (c *ctr) path(name string) string { return filepath.Join(c.dir, name) }

// waitFile waits until /rec/name exists (the helper's -ready-file).
func (c *ctr) waitFile(name string) {
	c.t.Helper()
	waitFor(c.t, 15*time.Second, "/rec/"+name, func() bool {
		_, err := os.Stat(c.path(name))
		return err == nil
	})
}

// waitRecord waits until the helper's record has a line starting with prefix.
func (c *ctr) waitRecord(prefix string) {
	c.t.Helper()
	waitFor(c.t, 15*time.Second, "record line "+strconv.Quote(prefix), func() bool {
		return c.recorded(prefix)
	})
}

// recorded reports whether the helper's record has a line starting with prefix.
func (c *ctr) recorded(prefix string) bool {
	b, _ := os.ReadFile(c.path("record"))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// stopped is how long a podman stop took.
type stopped struct {
	exited   time.Duration // from the podman stop command to the container's exit (its FinishedAt)
	returned time.Duration // until podman stop returned, its own clean-up included
}

func (s stopped) String() string {
	return fmt.Sprintf("exited after %v (podman stop returned after %v)", s.exited.Round(time.Millisecond), s.returned.Round(time.Millisecond))
}

// stop runs podman stop -t timeout and says how long the container took to exit.
func (c *ctr) stop(timeout int) stopped {
	c.t.Helper()
	begun := time.Now()
	podman(c.t, "stop", "--time", strconv.Itoa(timeout), c.name)
	return stopped{exited: finishedAt(c.t, c.name).Sub(begun), returned: time.Since(begun)}
}

// finishedAt is when podman saw the container exit.
func finishedAt(t *testing.T, name string) time.Time {
	t.Helper()
	out := podman(t, "inspect", "--format", "{{.State.FinishedAt.UnixNano}}", name)
	ns, err := strconv.ParseInt(out, 10, 64)
	if err != nil || ns <= 0 {
		t.Fatalf("podman inspect FinishedAt: %q", out)
	}
	return time.Unix(0, ns)
}

// exitCode is the exit code podman recorded for the stopped container.
func (c *ctr) exitCode() int {
	c.t.Helper()
	out := podman(c.t, "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", c.name)
	var status string
	var code int
	if _, err := fmt.Sscan(out, &status, &code); err != nil {
		c.t.Fatalf("podman inspect: %q: %v", out, err)
	}
	if status != "exited" && status != "stopped" {
		c.t.Fatalf("container %s is %s, not exited", c.name, status)
	}
	return code
}

// logLine is one JSON line of lfinit's log.
type logLine map[string]any

func (l logLine) str(key string) string {
	v, _ := l[key].(string)
	return v
}

func (l logLine) num(key string) float64 {
	v, _ := l[key].(float64)
	return v
}

// dur reads a duration lfinit logged as a number of seconds (key_seconds).
func (l logLine) dur(t *testing.T, key string) time.Duration {
	t.Helper()
	v, ok := l[key+"_seconds"].(float64)
	if !ok {
		t.Fatalf("log key %s_seconds=%v is not a number of seconds", key, l[key+"_seconds"])
	}
	return time.Duration(v * float64(time.Second))
}

// lfinitLog is lfinit's JSON log lines from podman logs (the helper's own
// output, interleaved, is skipped).
func (c *ctr) lfinitLog() []logLine {
	c.t.Helper()
	return parseLog(podman(c.t, "logs", c.name))
}

func parseLog(out string) []logLine {
	var lines []logLine
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.str("logger") == "lfinit" {
			lines = append(lines, l)
		}
	}
	return lines
}

// find returns the first line with msg and every key=value of kv.
func find(lines []logLine, msg string, kv ...string) (logLine, bool) {
next:
	for _, l := range lines {
		if l.str("msg") != msg {
			continue
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if fmt.Sprint(l[kv[i]]) != kv[i+1] {
				continue next
			}
		}
		return l, true
	}
	return nil, false
}

// exitLine is lfinit's final "exit" log line, waited for briefly: podman
// has the container's whole output once it is stopped, but be lenient.
func (c *ctr) exitLine() logLine {
	c.t.Helper()
	var l logLine
	waitFor(c.t, 5*time.Second, "lfinit's exit log line", func() bool {
		var ok bool
		l, ok = find(c.lfinitLog(), "exit")
		return ok
	})
	return l
}

// waitFor polls ok every 20ms until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
	}
}

// between fails the test unless lo <= d <= hi.
func between(t *testing.T, what string, d, lo, hi time.Duration) {
	t.Helper()
	if d < lo || d > hi {
		t.Errorf("%s = %v, want between %v and %v", what, d, lo, hi)
	}
}
