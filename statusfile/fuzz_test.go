package statusfile

import (
	"reflect"
	"testing"
	"time"
)

// FuzzParse: any bytes either fail to parse or give a status that survives
// a write-and-read round trip unchanged.
func FuzzParse(f *testing.F) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
	code, o := 143, Graceful
	for _, s := range []Status{
		{Version: Version, Phase: Ready, Ready: true, Pid: 1, PhaseSince: now, UpdatedAt: now},
		{Version: Version, Phase: Stopped, Outcome: &o, ExitCode: &code, Pid: 1, SignalAt: &now, StillRunning: []string{"a[2]"}, PhaseSince: now, UpdatedAt: now},
	} {
		b, err := Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":2,"phase":"ready","extra":1}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			return
		}
		if s.Version < 1 || s.Phase == "" {
			t.Fatalf("Parse accepted %+v", s)
		}
		out, err := Marshal(s)
		if err != nil {
			t.Fatalf("Marshal of a parsed status: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("a written status does not parse: %v\n%s", err, out)
		}
		out2, _ := Marshal(again)
		if !reflect.DeepEqual(out, out2) {
			t.Fatalf("round trip changed the document:\n%s\n%s", out, out2)
		}
	})
}
