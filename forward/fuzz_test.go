package forward

import (
	"syscall"
	"testing"
)

// FuzzParse: any text either fails or names a signal 1-64 whose name reads
// back to it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"TERM", "SIGTERM", "15", "sigint", "RTMIN+3", "RTMAX-2", "SIGRTMIN", "0", "65", "-1", "IOT", "rtmin+", "SIG", "+5", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sig, err := Parse(s)
		if err != nil {
			return
		}
		if sig < 1 || sig > RTMax {
			t.Fatalf("Parse(%q) = %d, out of range", s, sig)
		}
		if sig == 32 || sig == 33 {
			return // no name of their own
		}
		back, err := Parse(Name(sig))
		if err != nil || back != sig {
			t.Fatalf("Parse(%q) = %v, but Parse(Name) = %v, %v", s, sig, back, err)
		}
		if Reason(syscall.Signal(sig)) == "" {
			t.Fatalf("no reason word for %v", sig)
		}
	})
}
