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
	for _, tc := range []struct {
		secs string
		want error
	}{{"0", nil}, {"5", ErrTimeout}} {
		cmd := exec.Command("sleep", tc.secs)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := WaitPidfd(fd, 200*time.Millisecond); err != tc.want {
			t.Errorf("sleep %s: %v, want %v", tc.secs, err, tc.want)
		}
		unix.Close(fd)
		cmd.Process.Kill()
		cmd.Wait()
	}
}

func TestScrape(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	stop := Scrape(srv.URL, 3)
	for deadline := time.Now().Add(5 * time.Second); hits.Load() < 30 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	stop()
	n := hits.Load()
	time.Sleep(20 * time.Millisecond)
	if n < 30 || hits.Load() != n {
		t.Fatalf("hits %d then %d: want at least 30 and none after stop", n, hits.Load())
	}
}
