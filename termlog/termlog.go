// Package termlog is the Kubernetes termination message: a short summary
// of the final status, bounded to what the kubelet keeps, written where
// the orchestrator reads it after the container exits.
package termlog

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/light-fabric/lfinit/statusfile"
)

// maxMessage bounds Message. Kubernetes keeps at most
// 4096 bytes per container (and less when a pod has many), so staying well
// under that keeps the summary intact in `kubectl describe`.
const maxMessage = 1023

// defaultPath is where Kubernetes mounts the termination message
// file; a variable so tests can point it elsewhere.
var defaultPath = "/dev/termination-log"

// Message is the short final summary written to the termination
// log: one plain-text paragraph, always under 1024 bytes, built from the
// final status s and the total run time (lfinit's start to its end). Null
// fields are left out.
func Message(s statusfile.Status, total time.Duration) string {
	head := summaryHead(s, total)
	n := len(s.StillRunning)
	if n == 0 {
		return truncateUTF8(head, maxMessage)
	}
	const intro = "; still running at the hard deadline and killed: "
	fallback := intro + strconv.Itoa(n) + " process"
	if n != 1 {
		fallback += "es"
	}
	// The head is ours and short; truncating it only guards against an
	// absurd reason or signal string eating the whole budget.
	head = truncateUTF8(head, maxMessage-len(fallback))
	list, ok := killedList(head+intro, s.StillRunning)
	if !ok {
		return head + fallback
	}
	return list
}

// summaryHead is the first part of the summary: outcome (or phase), exit
// code, reason, signal, the run's duration and the shutdown's, and how the
// shutdown hook went, on one line.
func summaryHead(s statusfile.Status, total time.Duration) string {
	// Pairs in a slice, joined once: a closure that wrote to a Builder was
	// inlined at each of its calls, 12 KB of the binary.
	var kv []string
	field := func(k, v string) { kv = append(kv, k+"="+v) }
	if s.Outcome != nil {
		field("outcome", string(*s.Outcome))
	} else if s.Phase != "" {
		// Not finished (e.g. lfinit itself is failing): the phase is then
		// the most useful thing to show.
		field("phase", string(s.Phase))
	}
	if s.ExitCode != nil {
		field("exit_code", strconv.Itoa(*s.ExitCode))
	}
	if s.Reason != nil {
		field("reason", *s.Reason)
	}
	if s.Signal != nil {
		field("signal", *s.Signal)
	}
	if who := s.SenderName(); who != "" && who != "unknown" {
		field("sender", who)
	}
	field("run_duration", millis(total))
	if d, ok := shutdownDuration(s, total); ok {
		field("shutdown_duration", millis(d))
	}
	if s.Cause != nil {
		field("cause", string(*s.Cause))
	}
	if s.ChildUserSeconds != nil && s.ChildSystemSeconds != nil && s.ChildPeakRSSBytes != nil {
		field("child_cpu", millis(seconds(*s.ChildUserSeconds+*s.ChildSystemSeconds)))
		field("child_peak_rss", mebibytes(*s.ChildPeakRSSBytes))
	}
	if s.HookOutcome != nil {
		field("hook", string(*s.HookOutcome))
	}
	if s.HookExitCode != nil && s.HookDurationSeconds != nil {
		field("hook_exit_code", strconv.Itoa(*s.HookExitCode))
		field("hook_duration", millis(seconds(*s.HookDurationSeconds)))
	}
	head := "lfinit: " + strings.Join(kv, " ")
	if s.Cause != nil && *s.Cause == statusfile.CauseOOMKill {
		head += "; killed by the kernel's OOM killer" + memoryClause(s)
	}
	if s.ServiceStatus != nil && *s.ServiceStatus != "" {
		// The service's own last word (STATUS=, --ready-notify), cut so
		// that the message stays well under its 1 KiB.
		head += "; service status: " + truncateUTF8(*s.ServiceStatus, maxServiceStatus)
	}
	return oneLine(head)
}

// maxServiceStatus bounds the service's status in the message, in bytes.
const maxServiceStatus = 128

// millis is d rounded to the millisecond, as Duration.String writes it.
func millis(d time.Duration) string { return d.Round(time.Millisecond).String() }

// seconds is a published number of seconds as a Duration.
func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// memoryClause is ": 255MiB used of a 256MiB limit", or what of it is known.
func memoryClause(s statusfile.Status) string {
	switch {
	case s.MemoryPeakBytes != nil && s.MemoryLimitBytes != nil:
		return ": " + mebibytes(*s.MemoryPeakBytes) + " used of a " + mebibytes(*s.MemoryLimitBytes) + " limit"
	case s.MemoryPeakBytes != nil:
		return ": " + mebibytes(*s.MemoryPeakBytes) + " used"
	case s.MemoryLimitBytes != nil:
		return ": a " + mebibytes(*s.MemoryLimitBytes) + " limit"
	}
	return ""
}

// mebibytes is n in whole MiB, rounded down so that a use just under a
// limit never reads as the limit; under 1 MiB, in KiB.
func mebibytes(n uint64) string {
	if n < 1<<20 {
		return strconv.FormatUint(n>>10, 10) + "KiB"
	}
	return strconv.FormatUint(n>>20, 10) + "MiB"
}

// shutdownDuration is the time from the first shutdown signal to the end
// of the run (StartedAt + total); ok is false when no shutdown was asked.
// The published times are wall-clock ones, so a clock step is clamped to
// the run rather than shown as a negative or longer shutdown.
func shutdownDuration(s statusfile.Status, total time.Duration) (time.Duration, bool) {
	if s.SignalAt == nil || s.StartedAt == nil {
		return 0, false
	}
	d := s.StartedAt.Add(total).Sub(*s.SignalAt)
	return min(max(d, 0), total), true
}

// killedList appends to prefix as many of names as fit in the message,
// then ", and N more" for the rest; ok is false when not even one fits.
func killedList(prefix string, names []string) (string, bool) {
	var m strings.Builder
	m.WriteString(prefix)
	n, listed := len(names), 0
	for i, name := range names {
		name = oneLine(name)
		sep := ""
		if i > 0 {
			sep = ", "
		}
		more := ""
		if rest := n - i - 1; rest > 0 {
			more = fmt.Sprintf(", and %d more", rest)
		}
		// Include name only if the "and N more" that may follow still
		// fits: that is what guarantees the final append below fits.
		if m.Len()+len(sep)+len(name)+len(more) > maxMessage {
			break
		}
		m.WriteString(sep)
		m.WriteString(name)
		listed++
	}
	if listed == 0 {
		return "", false
	}
	if listed < n {
		fmt.Fprintf(&m, ", and %d more", n-listed)
	}
	return m.String(), true
}

// oneLine makes s one line of valid UTF-8, since process names come from the
// child and a newline or invalid byte would garble the message.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "?")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// truncateUTF8 cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Write writes msg to path, replacing its contents, where the
// orchestrator reads it after the container exits (Kubernetes: the
// container's terminationMessagePath). An empty path means disabled.
func Write(path, msg string) error {
	if path == "" {
		return nil
	}
	if err := os.WriteFile(path, []byte(msg), 0o644); err != nil {
		return fmt.Errorf("termination log %s: %w", path, err)
	}
	return nil
}

// Prepare checks at startup, before the child exists, that
// the termination message can be written at path, so that a bad
// --termination-log is a usage error (exit 2) rather than a WARN at exit,
// when the message is lost. It creates the file if missing, and leaves an
// existing one's contents alone.
func Prepare(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("termination log %s cannot be written: %v (choose a writable file with --termination-log, or none)", path, statusfile.RootCause(err))
	}
	return f.Close()
}

// Default returns /dev/termination-log if it exists (Kubernetes
// creates it), else "" so that lfinit does not create files in /dev elsewhere.
func Default() string {
	if _, err := os.Stat(defaultPath); err == nil {
		return defaultPath
	}
	return ""
}
