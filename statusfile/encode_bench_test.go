package statusfile

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkMarshal is the encoding of one status document (fullStatus,
// from status_test.go: every field set), done by the writer goroutine at
// every transition.
func BenchmarkMarshal(b *testing.B) {
	s := fullStatus()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublish is what the supervisor loop itself pays per transition:
// the deep copy and the hand-off to the writer (whose write is a no-op here).
func BenchmarkPublish(b *testing.B) {
	p := NewPublisher(filepath.Join(b.TempDir(), "status.json"), nil)
	p.write = func(string, Status) error { return nil }
	s := fullStatus()
	b.ReportAllocs()
	for b.Loop() {
		p.Publish(s)
	}
	b.StopTimer()
	if !p.Close(time.Second) {
		b.Fatal("the publisher did not drain")
	}
}

// BenchmarkWriteAtomic is one replacement of the file on disk (temporary
// file, fsync, rename, directory fsync), done off the loop by the writer.
func BenchmarkWriteAtomic(b *testing.B) {
	path := filepath.Join(b.TempDir(), "status.json")
	s := fullStatus()
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteAtomic(path, s); err != nil {
			b.Fatal(err)
		}
	}
}
