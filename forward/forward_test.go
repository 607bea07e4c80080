package forward

import (
	"errors"
	"syscall"
	"testing"
)

func TestParseSpellings(t *testing.T) {
	for in, want := range map[string]syscall.Signal{
		"TERM": syscall.SIGTERM, "SIGTERM": syscall.SIGTERM, "15": syscall.SIGTERM,
		"term": syscall.SIGTERM, " sigint ": syscall.SIGINT, "QUIT": syscall.SIGQUIT,
		"WINCH": syscall.SIGWINCH, "IOT": syscall.SIGABRT, "9": syscall.SIGKILL,
		"RTMIN": 34, "SIGRTMIN+3": 37, "RTMAX": 64, "RTMAX-2": 62, "64": 64, "1": syscall.SIGHUP,
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "0", "65", "-1", "TERMINATE", "SIG", "RTMIN-1", "RTMAX+1", "RTMIN+31", "RTMIN+x", "1.5"} {
		if sig, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", in, sig)
		}
	}
}

func TestNameRoundTripsEverySignal(t *testing.T) {
	for n := 1; n <= RTMax; n++ {
		sig := syscall.Signal(n)
		name := Name(sig)
		if n == 32 || n == 33 {
			if name != "SIG32" && name != "SIG33" {
				t.Errorf("Name(%d) = %q", n, name)
			}
			continue
		}
		back, err := Parse(name)
		if err != nil || back != sig {
			t.Errorf("Parse(Name(%d)=%q) = %v, %v", n, name, back, err)
		}
	}
}

func TestReason(t *testing.T) {
	for sig, want := range map[syscall.Signal]string{
		syscall.SIGTERM: "terminate", syscall.SIGINT: "interrupt", syscall.SIGHUP: "hangup",
		syscall.SIGQUIT: "quit", 40: "rtmin+6",
	} {
		if got := Reason(sig); got != want {
			t.Errorf("Reason(%v) = %q, want %q", sig, got, want)
		}
	}
}

func TestRelayedExcludesInternalSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGCHLD, syscall.SIGURG, syscall.SIGPIPE, syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGPROF, 32, 33, 34} {
		if IsRelayed(sig) {
			t.Errorf("%s must not be relayed", Name(sig))
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2,
		syscall.SIGWINCH, syscall.SIGALRM, syscall.SIGCONT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, 35, 50, 64,
		syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGILL, syscall.SIGFPE, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGABRT} {
		if !IsRelayed(sig) {
			t.Errorf("%s must be relayed", Name(sig))
		}
	}
}

func TestDeliverRefusesUnsafePids(t *testing.T) {
	for _, pid := range []int{1, 0, -1, -42} {
		for _, tg := range []Target{Child, Group} {
			if err := Deliver(pid, tg, syscall.Signal(0)); !errors.Is(err, ErrUnsafePid) {
				t.Errorf("Deliver(%d, %v) = %v, want ErrUnsafePid", pid, tg, err)
			}
		}
	}
}

func TestParseTarget(t *testing.T) {
	for _, s := range []string{"child", "group"} {
		tg, err := ParseTarget(s)
		if err != nil || tg.String() != s {
			t.Errorf("ParseTarget(%q) = %v, %v", s, tg, err)
		}
	}
	if _, err := ParseTarget("tree"); err == nil {
		t.Error("ParseTarget(tree) must fail")
	}
}
