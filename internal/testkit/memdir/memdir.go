// Package memdir gives a test a temporary directory on a memory file
// system, for the files lfinit writes while a test times or reads them.
// It is test tooling, not part of lfinit.
//
// lfinit fsyncs every status write and gives its final records a bounded
// time; a disk busy with the other test packages' builds can take longer
// than that, and then lfinit rightly leaves the file unfinished. A test
// that checks the records, not the disk, keeps them in memory.
package memdir

import (
	"os"
	"testing"
)

// Root is where the directories are made: a tmpfs on Linux distributions.
const Root = "/dev/shm"

// New returns a directory under Root, removed when the test ends; where
// Root is missing, t.TempDir().
func New(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat(Root); err != nil || !fi.IsDir() {
		// Said, so that a timing failure on a slow disk explains itself.
		t.Logf("no %s: the files lfinit writes go to disk (%v)", Root, err)
		return t.TempDir()
	}
	dir, err := os.MkdirTemp(Root, "lfinit-test-")
	if err != nil {
		t.Fatalf("a directory in %s: %v", Root, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
