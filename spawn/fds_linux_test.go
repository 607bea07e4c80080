package spawn

import (
	"os"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestProcFDsListsWhatReadDirLists opens enough descriptors that the
// listing takes several getdents64 calls, and checks procFDs against
// os.ReadDir of the same directory.
func TestProcFDsListsWhatReadDirLists(t *testing.T) {
	var opened []int
	defer func() { CloseFDs(opened) }()
	for range 200 {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		opened = append(opened, fd)
	}
	got, err := procFDs()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			t.Fatalf("entry %q", e.Name())
		}
		// Each listing sees its own directory's descriptor, which the
		// other has closed by now.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			want = append(want, fd)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("procFDs = %v\nos.ReadDir = %v", got, want)
	}
	for _, fd := range opened {
		if !slices.Contains(got, fd) {
			t.Errorf("descriptor %d missing from procFDs", fd)
		}
	}
}

func TestAtoiName(t *testing.T) {
	for _, c := range []struct {
		name string
		fd   int
		ok   bool
	}{
		{"0\x00", 0, true}, {"12\x00\x00\x00", 12, true}, {"1023", 1023, true},
		{".\x00", 0, false}, {"..\x00", 0, false}, {"\x00", 0, false}, {"9x\x00", 0, false},
		{"99999999999999999999\x00", 0, false},
	} {
		fd, ok := atoiName([]byte(c.name))
		if fd != c.fd || ok != c.ok {
			t.Errorf("atoiName(%q) = %d, %v; want %d, %v", c.name, fd, ok, c.fd, c.ok)
		}
	}
}
