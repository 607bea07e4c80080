package measure

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestWaitPidfd(t *testing.T) {
	// One that exits (sleep 0), given all the time it needs: WaitPidfd
	// returns at its exit. One that cannot exit before it is killed (sleep
	// for an hour): WaitPidfd gives up after its 200ms.
	for _, tc := range []struct {
		secs    string
		timeout time.Duration
		want    error
	}{{"0", time.Minute, nil}, {"3600", 200 * time.Millisecond, ErrTimeout}} {
		cmd := exec.Command("sleep", tc.secs)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := WaitPidfd(fd, tc.timeout); err != tc.want {
			t.Errorf("sleep %s: %v, want %v", tc.secs, err, tc.want)
		}
		unix.Close(fd)
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// TestScrape: the scrapers hit the server back to back, and once stop
// has returned none is left: no request starts after it, even when stop
// meets every scraper in the middle of one.
func TestScrape(t *testing.T) {
	const scrapers = 3
	var hits, late atomic.Int64
	var stopped atomic.Bool
	held := make(chan struct{}, 100)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stopped.Load() {
			late.Add(1)
		}
		// After 30, each request is held until the test lets it go.
		if hits.Add(1) > 30 {
			select {
			case held <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	stop := Scrape(srv.URL, scrapers)
	for range scrapers {
		select {
		case <-held:
		case <-time.After(time.Minute):
			t.Fatalf("after %d hits, the scrapers are not in a request", hits.Load())
		}
	}
	returned := make(chan struct{})
	go func() {
		stop()
		stopped.Store(true)
		close(returned)
	}()
	close(release)
	<-returned
	// Close waits for every request the server has: after it, the count
	// of those that began after stop returned is final.
	srv.Close()
	if n := late.Load(); n != 0 {
		t.Fatalf("%d requests after stop returned", n)
	}
}
