package notify

import (
	"testing"
	"unicode/utf8"
)

// FuzzParse holds Parse to its promises on any datagram: no panic, every
// non-empty line counted once, a status that is short, valid UTF-8 and
// free of control characters.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"READY=1\nSTATUS=ok\n", "MAINPID=1\nWATCHDOG=trigger", "\x00", "=\n=\n", "STATUS=\xc3", "ERRNO=18446744073709551616"} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, b []byte, truncated bool) {
		m := Parse(b, truncated)
		total := 0
		for _, n := range m.Lines {
			total += int(n)
		}
		if len(b) > 0 && total == 0 {
			nonEmpty := false
			for _, c := range b {
				nonEmpty = nonEmpty || c != '\n'
			}
			if nonEmpty {
				t.Fatalf("%q: no line counted", b)
			}
		}
		if len(m.Status) > MaxStatus || !utf8.ValidString(m.Status) {
			t.Fatalf("status %q", m.Status)
		}
		for _, c := range []byte(m.Status) {
			if c < 0x20 || c == 0x7f {
				t.Fatalf("control character in status %q", m.Status)
			}
		}
		if m.Has(KindMainPID) && m.MainPID <= 0 {
			t.Fatalf("MAINPID %d", m.MainPID)
		}
	})
}
