package termlog

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/light-fabric/lfinit/statusfile"
)

func TestTerminationMessage(t *testing.T) {
	o := func(v statusfile.Outcome) *statusfile.Outcome { return &v }
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := start.Add(d); return &v }
	for _, c := range []struct {
		s     statusfile.Status
		total time.Duration
		want  string
	}{
		{
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.DeadlineExceeded), ExitCode: pointerTo(1), Reason: pointerTo("terminate"), Signal: pointerTo("SIGTERM"),
				StartedAt: at(0), SignalAt: at(52*time.Second + 249*time.Millisecond), StillRunning: []string{"legacy-server[7]", "worker[12]"}, Killed: 2},
			60*time.Second + 500*time.Millisecond + 400*time.Microsecond,
			"lfinit: outcome=deadline-exceeded exit_code=1 reason=terminate signal=SIGTERM run_duration=1m0.5s shutdown_duration=8.251s; still running at the hard deadline and killed: legacy-server[7], worker[12]",
		},
		{
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.Graceful), ExitCode: pointerTo(0), Reason: pointerTo("terminate"), Signal: pointerTo("SIGTERM"),
				StartedAt: at(0), SignalAt: at(200 * time.Millisecond)},
			1200*time.Millisecond + 300*time.Microsecond,
			"lfinit: outcome=graceful exit_code=0 reason=terminate signal=SIGTERM run_duration=1.2s shutdown_duration=1s",
		},
		{
			// The hook's outcome, its code and its duration.
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.Graceful), ExitCode: pointerTo(0), Reason: pointerTo("terminate"), Signal: pointerTo("SIGTERM"),
				StartedAt: at(0), SignalAt: at(200 * time.Millisecond), HookOutcome: pointerTo(statusfile.HookTimedOut), HookExitCode: pointerTo(137), HookDurationSeconds: pointerTo(2.0004)},
			3200 * time.Millisecond,
			"lfinit: outcome=graceful exit_code=0 reason=terminate signal=SIGTERM run_duration=3.2s shutdown_duration=3s hook=timed-out hook_exit_code=137 hook_duration=2s",
		},
		{
			// Who sent the stop: from outside the PID namespace, and a process by name.
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.Graceful), ExitCode: pointerTo(0), Reason: pointerTo("terminate"), Signal: pointerTo("SIGTERM"),
				SignalSender: pointerTo("outside-pid-namespace"), SignalSenderUid: pointerTo(uint32(0)), StartedAt: at(0), SignalAt: at(200 * time.Millisecond)},
			1200 * time.Millisecond,
			"lfinit: outcome=graceful exit_code=0 reason=terminate signal=SIGTERM sender=outside-pid-namespace run_duration=1.2s shutdown_duration=1s",
		},
		{
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.Graceful), ExitCode: pointerTo(0), Reason: pointerTo("interrupt"), Signal: pointerTo("SIGINT"),
				SignalSender: pointerTo("process"), SignalSenderPid: pointerTo(42), SignalSenderCommand: pointerTo("bash"), StartedAt: at(0), SignalAt: at(200 * time.Millisecond)},
			1200 * time.Millisecond,
			"lfinit: outcome=graceful exit_code=0 reason=interrupt signal=SIGINT sender=bash[42] run_duration=1.2s shutdown_duration=1s",
		},
		{
			// Not recorded: nothing said.
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.Graceful), ExitCode: pointerTo(0), Reason: pointerTo("terminate"), Signal: pointerTo("SIGTERM"),
				SignalSender: pointerTo("unknown"), StartedAt: at(0), SignalAt: at(200 * time.Millisecond)},
			1200 * time.Millisecond,
			"lfinit: outcome=graceful exit_code=0 reason=terminate signal=SIGTERM run_duration=1.2s shutdown_duration=1s",
		},
		{
			// No shutdown was asked: no shutdown_duration.
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.ChildExited), ExitCode: pointerTo(3), StartedAt: at(0)},
			42*time.Minute + 1500*time.Microsecond,
			"lfinit: outcome=child-exited exit_code=3 run_duration=42m0.002s",
		},
		{
			// The kernel's OOM killer: the cause, the cost, and the memory in words.
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.ChildExited), ExitCode: pointerTo(137), Reason: pointerTo("child-exit"), StartedAt: at(0),
				Cause: pointerTo(statusfile.CauseOOMKill), ChildPeakRSSBytes: pointerTo(uint64(255<<20 + 900<<10)), ChildUserSeconds: pointerTo(1.2), ChildSystemSeconds: pointerTo(0.3),
				MemoryPeakBytes: pointerTo(uint64(256<<20 - 4096)), MemoryLimitBytes: pointerTo(uint64(256 << 20))},
			5 * time.Second,
			"lfinit: outcome=child-exited exit_code=137 reason=child-exit run_duration=5s cause=oom-kill child_cpu=1.5s child_peak_rss=255MiB; killed by the kernel's OOM killer: 255MiB used of a 256MiB limit",
		},
		{
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.Failed), ExitCode: pointerTo(127)},
			3 * time.Millisecond,
			"lfinit: outcome=failed exit_code=127 run_duration=3ms",
		},
		{
			statusfile.Status{Phase: statusfile.Draining},
			0,
			"lfinit: phase=draining run_duration=0s",
		},
		{
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.DeadlineExceeded), ExitCode: pointerTo(1), StillRunning: []string{"bad\nname[3]"}},
			time.Second,
			"lfinit: outcome=deadline-exceeded exit_code=1 run_duration=1s; still running at the hard deadline and killed: bad name[3]",
		},
		{
			// The wall clock stepped back after the signal: clamped to 0, never negative.
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.Graceful), ExitCode: pointerTo(0), StartedAt: at(0), SignalAt: at(time.Hour)},
			time.Second,
			"lfinit: outcome=graceful exit_code=0 run_duration=1s shutdown_duration=0s",
		},
		{
			// ... or forward: never longer than the run.
			statusfile.Status{Phase: statusfile.Stopped, Outcome: o(statusfile.Graceful), ExitCode: pointerTo(0), StartedAt: at(0), SignalAt: at(-time.Hour)},
			time.Second,
			"lfinit: outcome=graceful exit_code=0 run_duration=1s shutdown_duration=1s",
		},
	} {
		if got := Message(c.s, c.total); got != c.want {
			t.Errorf("Message\n got %q\nwant %q", got, c.want)
		}
	}
}

var andMore = regexp.MustCompile(`, and (\d+) more$`)

func TestTerminationMessageBounded(t *testing.T) {
	base := statusfile.Status{Phase: statusfile.Stopped, Outcome: pointerTo(statusfile.DeadlineExceeded), ExitCode: pointerTo(1), Reason: pointerTo("terminate"), Signal: pointerTo("SIGTERM")}
	for _, n := range []int{1, 2, 5, 30, 31, 100, 1000} {
		for _, width := range []int{10, 40, 100, 300, 2000} {
			s := base
			s.StillRunning = nil
			for i := range n {
				name := fmt.Sprintf("process-%04d-%s", i, strings.Repeat("x", width))
				s.StillRunning = append(s.StillRunning, fmt.Sprintf("%s[%d]", name, 1000+i))
			}
			msg := Message(s, 8*time.Second)
			if len(msg) >= 1024 {
				t.Fatalf("n=%d width=%d: %d bytes", n, width, len(msg))
			}
			if strings.Contains(msg, "\n") || !utf8.ValidString(msg) {
				t.Fatalf("n=%d width=%d: not one line of UTF-8: %q", n, width, msg)
			}
			_, list, ok := strings.Cut(msg, "; still running at the hard deadline and killed: ")
			if !ok {
				t.Fatalf("n=%d width=%d: no list: %q", n, width, msg)
			}
			listed, rest := 0, 0
			if m := andMore.FindStringSubmatch(list); m != nil {
				rest, _ = strconv.Atoi(m[1])
				list = strings.TrimSuffix(list, m[0])
			}
			if strings.HasSuffix(list, " processes") || strings.HasSuffix(list, " process") {
				// Not even one name fits: only the count.
				if want := fmt.Sprint(n); !strings.HasPrefix(list, want+" process") {
					t.Fatalf("n=%d width=%d: count %q", n, width, list)
				}
				continue
			}
			for i, name := range strings.Split(list, ", ") {
				if name != s.StillRunning[i] {
					t.Fatalf("n=%d width=%d: name %d = %q, want %q", n, width, i, name, s.StillRunning[i])
				}
				listed++
			}
			if listed+rest != n {
				t.Fatalf("n=%d width=%d: %d listed + %d more != %d: %q", n, width, listed, rest, n, msg)
			}
			if n == 1000 && width == 10 && (listed < 20 || rest == 0) {
				t.Errorf("expected many names and an \"and N more\": %q", msg)
			}
		}
	}
}

func TestTerminationMessageHugeFields(t *testing.T) {
	s := statusfile.Status{Outcome: pointerTo(statusfile.Graceful), Reason: pointerTo(strings.Repeat("é", 2000)), Signal: pointerTo("SIGTERM"),
		StillRunning: []string{"a[1]"}}
	msg := Message(s, time.Second)
	if len(msg) >= 1024 || !utf8.ValidString(msg) {
		t.Errorf("%d bytes, valid UTF-8 %v", len(msg), utf8.ValidString(msg))
	}
	s.StillRunning = nil
	s.Signal = pointerTo("\xff\xfe")
	msg = Message(s, time.Second)
	if len(msg) >= 1024 || !utf8.ValidString(msg) {
		t.Errorf("%d bytes, valid UTF-8 %v", len(msg), utf8.ValidString(msg))
	}
}

func TestWriteTerminationLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "termination-log")
	if err := Write(path, strings.Repeat("long ", 100)); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, "short"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "short" {
		t.Errorf("file = %q, %v; want it truncated to the new message", b, err)
	}
	if err := Write("", "x"); err != nil {
		t.Errorf("empty path (disabled) = %v", err)
	}
	bad := filepath.Join(path, "sub")
	if err := Write(bad, "x"); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("unwritable path = %v", err)
	}
}

func TestDefaultTerminationLog(t *testing.T) {
	old := defaultPath
	t.Cleanup(func() { defaultPath = old })
	defaultPath = filepath.Join(t.TempDir(), "termination-log")
	if got := Default(); got != "" {
		t.Errorf("missing file: got %q, want \"\"", got)
	}
	if err := os.WriteFile(defaultPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Default(); got != defaultPath {
		t.Errorf("existing file: got %q", got)
	}
}

func pointerTo[T any](v T) *T { return &v }

func TestSummaryCarriesServiceStatus(t *testing.T) {
	o, code, st := statusfile.ChildExited, 0, strings.Repeat("é", 200)
	s := statusfile.Status{Outcome: &o, ExitCode: &code, ServiceStatus: &st}
	got := summaryHead(s, time.Second)
	i := strings.Index(got, "; service status: ")
	if i < 0 || len(got)-i > len("; service status: ")+maxServiceStatus || !utf8.ValidString(got) {
		t.Fatalf("summary %q", got)
	}
}
