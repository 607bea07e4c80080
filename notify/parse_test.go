package notify

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	m := Parse([]byte("READY=1\nSTATUS=Processing requests\nMAINPID=42\n"), false)
	if !m.Has(KindReady) || !m.Has(KindStatus) || m.Status != "Processing requests" || m.MainPID != 42 {
		t.Fatalf("got %+v", m)
	}
	if m.Has(KindGarbage) || m.Has(KindIgnored) {
		t.Fatalf("clean message counted as garbage: %+v", m.Lines)
	}
}

func TestParseKinds(t *testing.T) {
	for _, c := range []struct {
		line string
		want Kind
	}{
		{"READY=1", KindReady},
		{"READY=0", KindGarbage},
		{"STOPPING=1", KindStopping},
		{"RELOADING=1", KindReloading},
		{"STATUS=", KindStatus},
		{"MAINPID=0", KindGarbage},
		{"MAINPID=-3", KindGarbage},
		{"MAINPID=abc", KindGarbage},
		{"MAINPID=99999999999", KindGarbage},
		{"WATCHDOG=1", KindWatchdog},
		{"WATCHDOG=trigger", KindWatchdogTrigger},
		{"WATCHDOG=2", KindGarbage},
		{"EXTEND_TIMEOUT_USEC=5000000", KindExtendTimeout},
		{"ERRNO=2", KindErrno},
		{"BUSERROR=org.freedesktop.DBus.Error.TimedOut", KindBusError},
		{"BARRIER=1", KindBarrier},
		{"FDSTORE=1", KindIgnored},
		{"WATCHDOG_USEC=100", KindIgnored},
		{"X_CUSTOM=1", KindIgnored},
		{"no equals sign", KindGarbage},
		{"=1", KindGarbage},
		{"ready=1", KindGarbage},
		{"STATUS=\xff\xfe", KindGarbage},
	} {
		m := Parse([]byte(c.line), false)
		for k := range NumKinds {
			want := uint16(0)
			if k == c.want {
				want = 1
			}
			if m.Lines[k] != want {
				t.Errorf("%q: %v lines %d, want %d", c.line, k, m.Lines[k], want)
			}
		}
	}
}

func TestParseValues(t *testing.T) {
	m := Parse([]byte("EXTEND_TIMEOUT_USEC=1500000\nERRNO=110\nSTATUS=a\nSTATUS=b\n\n\n"), false)
	if m.Extend != 1500*time.Millisecond || m.Errno != 110 || m.Status != "b" || m.Lines[KindStatus] != 2 {
		t.Fatalf("got %+v", m)
	}
}

func TestParseWholeDatagramGarbage(t *testing.T) {
	for name, m := range map[string]Message{
		"nul":       Parse([]byte("READY=1\x00STATUS=x"), false),
		"truncated": Parse([]byte("READY=1"), true),
		"too long":  Parse([]byte("READY=1\n"+strings.Repeat("A", MaxDatagram)), false),
	} {
		if m.Has(KindReady) || m.Lines[KindGarbage] != 1 {
			t.Errorf("%s: %+v", name, m.Lines)
		}
	}
}

func TestStatusCutAndSanitised(t *testing.T) {
	m := Parse([]byte("STATUS=a\tb\x1b[31m"+strings.Repeat("é", MaxStatus)), false)
	if len(m.Status) > MaxStatus || strings.ContainsAny(m.Status, "\t\x1b") || !strings.HasPrefix(m.Status, "a b [31m") {
		t.Fatalf("status %q (%d bytes)", m.Status, len(m.Status))
	}
	if !strings.HasSuffix(m.Status, "é") {
		t.Fatalf("status split a character: %q", m.Status[len(m.Status)-4:])
	}
}

func TestKindNames(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds() {
		if k.String() == "" || seen[k.String()] {
			t.Fatalf("kind %d name %q", k, k.String())
		}
		seen[k.String()] = true
	}
}
