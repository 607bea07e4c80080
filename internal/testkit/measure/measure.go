// Package measure holds the few measuring tools that the benchmarks and
// the end-to-end tests share: waiting for a process to exit through its
// pidfd, scraping an HTTP endpoint in a tight loop, a free local port.
package measure

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ErrTimeout is returned by WaitPidfd when the process outlives the wait.
var ErrTimeout = errors.New("timed out waiting for an exit")

// WaitPidfd blocks until the process behind the pidfd fd has exited (the
// pidfd turns readable), or timeout passes.
func WaitPidfd(fd int, timeout time.Duration) error {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return ErrTimeout
		}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}

// client keeps its loopback connections alive, so a request costs one
// round trip.
var client = &http.Client{Timeout: 2 * time.Second}

// Status GETs url and returns the HTTP status, or 0 when there was no
// answer (the server may be gone: that is what the measurements provoke).
func Status(url string) int {
	resp, err := client.Get(url)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Scrape starts n goroutines that GET url back to back until the returned
// stop is called; stop waits for them. Errors are ignored: the server may
// go away mid-run, which is what the measurements provoke.
func Scrape(url string, n int) (stop func()) {
	timed := ScrapeTimed(url, n)
	return func() { timed() }
}

// ScrapeTimed is Scrape whose stop also returns how long each answered
// GET took, in no particular order.
func ScrapeTimed(url string, n int) (stop func() []time.Duration) {
	done := make(chan struct{})
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		times []time.Duration
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				t0 := time.Now()
				if Status(url) == 0 {
					continue
				}
				mu.Lock()
				times = append(times, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	var once sync.Once
	return func() []time.Duration {
		once.Do(func() { close(done); wg.Wait() })
		mu.Lock()
		defer mu.Unlock()
		return times
	}
}

// FreeAddr is a 127.0.0.1 address whose port was free a moment ago (and
// that nothing listens on until someone takes it).
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
