package measure

import (
	"bytes"
	"os"
	"sync"
	"syscall"
)

// Buffer collects a process's output and is safe to read while exec's
// copying goroutines write to it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// FillPipe writes to the pipe f until it holds no more, so that the next
// write to it would block: a stderr nobody reads.
func FillPipe(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	cerr := rc.Control(func(fd uintptr) {
		if werr = syscall.SetNonblock(int(fd), true); werr != nil {
			return
		}
		chunk := make([]byte, 4096)
		for {
			if _, err := syscall.Write(int(fd), chunk); err != nil {
				break
			}
		}
		werr = syscall.SetNonblock(int(fd), false)
	})
	if cerr != nil {
		return cerr
	}
	return werr
}
