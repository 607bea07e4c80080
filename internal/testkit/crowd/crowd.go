// Package crowd starts a crowd of unrelated processes, the other tenants
// of a busy host, for the tests and benchmarks that show lfinit's work
// does not grow with them. It is test tooling, not part of lfinit.
package crowd

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

//go:embed csrc/crowd.c
var source []byte

// Crowd is a running crowd.
type Crowd struct {
	N     int
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	Pgid  int // the crowd's process group
	ended bool
}

// Build compiles the crowd program (gcc, static) into dir and returns its path.
func Build(dir string) (string, error) {
	src, bin := filepath.Join(dir, "crowd.c"), filepath.Join(dir, "crowd")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", err
	}
	if out, err := exec.Command("gcc", "-static", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc crowd.c (scripts/install-deps installs gcc and static glibc): %v\n%s", err, out)
	}
	return bin, nil
}

// Start starts n pausing processes with the program bin and waits until
// all of them exist. wrap, if given, is a command that runs it (nsenter…).
func Start(bin string, n int, wrap ...string) (*Crowd, error) {
	argv := append(append([]string{}, wrap...), bin, fmt.Sprint(n))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Crowd{N: n, cmd: cmd, in: in, out: bufio.NewReader(stdout), Pgid: cmd.Process.Pid}
	line, err := c.out.ReadString('\n')
	if strings.TrimSpace(line) != fmt.Sprintf("ready %d", n) {
		c.Stop()
		return nil, fmt.Errorf("crowd of %d did not start: %q %v", n, line, err)
	}
	return c, nil
}

// Stop ends the crowd and reports how many of its processes had died
// before (killed by someone else): 0 when nothing touched it.
func (c *Crowd) Stop() (dead int, err error) {
	if c.ended {
		return 0, nil
	}
	c.ended = true
	c.in.Close()
	line, _ := c.out.ReadString('\n')
	if werr := c.cmd.Wait(); werr != nil {
		err = werr
	}
	if _, serr := fmt.Sscanf(strings.TrimSpace(line), "dead=%d", &dead); serr != nil && err == nil {
		err = fmt.Errorf("crowd said %q", line)
	}
	return dead, err
}

// Kill ends the crowd without the count, for cleanups after a failure.
func (c *Crowd) Kill() {
	if !c.ended {
		syscall.Kill(-c.Pgid, syscall.SIGKILL)
		c.Stop()
	}
}
