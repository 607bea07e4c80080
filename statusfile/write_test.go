package statusfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tempFiles lists WriteAtomic's leftovers in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tmp []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			tmp = append(tmp, e.Name())
		}
	}
	return tmp
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	for _, ph := range []Phase{Starting, Ready, Stopped} { // create, then replace
		if err := WriteAtomic(path, Status{Version: Version, Phase: ph, Pid: 1}); err != nil {
			t.Fatal(err)
		}
		s, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if s.Phase != ph {
			t.Errorf("phase = %q, want %q", s.Phase, ph)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644 so probes running as another user can read it", fi.Mode().Perm())
	}
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestWriteAtomicUnderRegularFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(file, "status.json")
	err := WriteAtomic(path, Status{Phase: Starting})
	if !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("err = %v, want ENOTDIR", err)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "create temporary file") {
		t.Errorf("error does not name the path and step: %v", err)
	}
	if classify(err) != KindMissing {
		t.Errorf("classify = %q, want %q", classify(err), KindMissing)
	}
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestWriteAtomicPathIsDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteAtomic(path, Status{Phase: Starting})
	if err == nil {
		t.Fatal("WriteAtomic over a directory succeeded")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "rename") {
		t.Errorf("error does not name the path and step: %v", err)
	}
	// The temporary file was created and must have been removed.
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Errorf("temporary files left after a failed rename: %v", tmp)
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Errorf("the directory at path was disturbed: %v %v", fi, err)
	}
}

func TestWriteAtomicEmptyPath(t *testing.T) {
	if err := WriteAtomic("", Status{}); err == nil {
		t.Fatal("empty path accepted")
	}
}

func TestClassify(t *testing.T) {
	wrap := func(e error) error {
		return fmt.Errorf("status file /x: rename: %w", &fs.PathError{Op: "rename", Path: "/x", Err: e})
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{wrap(syscall.EROFS), KindReadOnly},
		{wrap(syscall.EACCES), KindReadOnly},
		{wrap(syscall.EPERM), KindReadOnly},
		{wrap(syscall.ENOSPC), KindNoSpace},
		{wrap(syscall.EDQUOT), KindNoSpace},
		{wrap(syscall.ENOENT), KindMissing},
		{wrap(syscall.ENOTDIR), KindMissing},
		{wrap(syscall.EIO), KindOther},
		{errors.New("boom"), KindOther},
	} {
		if got := classify(c.err); got != c.want {
			t.Errorf("classify(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestPrepareCreatesMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "status.json")
	if err := Prepare(path); err != nil {
		t.Fatal(err)
	}
	s, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != Version || s.Phase != Starting || s.Pid != os.Getpid() || s.UpdatedAt.IsZero() || s.PhaseSince.IsZero() {
		t.Errorf("unexpected first status: %+v", s)
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil || fi.Mode().Perm() != 0o755&^umask() {
		t.Errorf("directory: %v %v", fi, err)
	}
}

// umask returns the process umask without changing it for long.
func umask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}

func TestPrepareUnderRegularFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		filepath.Join(file, "status.json"),
		filepath.Join(file, "sub", "deeper", "status.json"),
	} {
		err := Prepare(path)
		if !errors.Is(err, syscall.ENOTDIR) {
			t.Fatalf("Prepare(%s) = %v, want ENOTDIR", path, err)
		}
		want := fmt.Sprintf("status file %s: %s is not a directory (choose a writable path with --status-file)", path, file)
		if err.Error() != want {
			t.Errorf("message\n got %q\nwant %q", err, want)
		}
	}
}

func TestPreparePathIsDirectory(t *testing.T) {
	path := t.TempDir()
	err := Prepare(path)
	if err == nil {
		t.Fatal("Prepare accepted a directory")
	}
	want := fmt.Sprintf("status file %s: %s is a directory (choose a file path with --status-file)", path, path)
	if err.Error() != want {
		t.Errorf("message\n got %q\nwant %q", err, want)
	}
}

func TestPrepareTrailingSlash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status") + "/"
	if err := Prepare(path); err == nil || !strings.Contains(err.Error(), "name a file") {
		t.Errorf("Prepare(%q) = %v", path, err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("Prepare created %s", path)
	}
}

func TestPrepareEmptyPath(t *testing.T) {
	if err := Prepare(""); err == nil || !strings.Contains(err.Error(), "--status-file") {
		t.Errorf("Prepare(\"\") = %v", err)
	}
}

// The tests run as root, which ignores permissions and cannot make a
// read-only file system without mounting; the messages for those causes are
// checked with fake errors.
func TestPrepareFailureMessages(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing", "status.json")
	fake := func(e syscall.Errno) error {
		return &fs.PathError{Op: "mkdir", Path: filepath.Dir(path), Err: e}
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{fake(syscall.EROFS), fmt.Sprintf("status file %s: directory %s is read-only (choose a writable path with --status-file)", path, dir)},
		{fake(syscall.EACCES), fmt.Sprintf("status file %s: directory %s is not writable by uid %d (choose a writable path with --status-file, or make it writable)", path, dir, os.Geteuid())},
		{fake(syscall.ENOSPC), fmt.Sprintf("status file %s: no space left in %s (choose a writable path with --status-file, or free some space)", path, dir)},
		{fake(syscall.EIO), fmt.Sprintf("status file %s: input/output error (choose a writable path with --status-file)", path)},
	} {
		err := prepareFailure(path, filepath.Dir(path), c.err)
		if err.Error() != c.want {
			t.Errorf("message\n got %q\nwant %q", err, c.want)
		}
		if !errors.Is(err, c.err.(*fs.PathError).Err) {
			t.Errorf("%v does not wrap its cause", err)
		}
	}
}

func TestPrepareReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	err := Prepare(filepath.Join(dir, "status.json"))
	if err == nil || !strings.Contains(err.Error(), "directory "+dir+" is not writable") {
		t.Errorf("Prepare in a read-only directory = %v", err)
	}
}

// A reader polling the file while it is replaced must always get a complete
// document: never an error, never an empty file.
func TestConcurrentReaders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	if err := WriteAtomic(path, Status{Version: Version, Phase: Starting}); err != nil {
		t.Fatal(err)
	}
	writes := 2000
	if testing.Short() {
		writes = 50 // each write syncs: 2000 take about 20s on this machine's disk
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var reads, bad int
	var firstBad string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			b, err := os.ReadFile(path)
			reads++
			if err == nil {
				_, err = Parse(b)
			}
			if err != nil {
				if bad == 0 {
					firstBad = fmt.Sprintf("%v (%d bytes: %q)", err, len(b), b)
				}
				bad++
			}
		}
	}()
	start := time.Now()
	for i := range writes {
		s := Status{Version: Version, Phase: Phases[i%len(Phases)], Pid: i, Killed: i, UpdatedAt: time.Now()}
		if err := WriteAtomic(path, s); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	if bad != 0 {
		t.Fatalf("%d of %d reads failed; first: %s", bad, reads, firstBad)
	}
	s, err := Read(path)
	if err != nil || s.Pid != writes-1 {
		t.Errorf("final status %+v, %v", s, err)
	}
	if tmp := tempFiles(t, filepath.Dir(path)); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	t.Logf("%d writes, %d reads in %v", writes, reads, time.Since(start))
}
