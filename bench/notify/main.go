// Command notify measures how soon lfinit's /readyz follows a service's
// READY=1 (--ready-notify). lfinit runs this program again as its child
// (-child), which, round after round, sends RELOADING=1, waits for
// /readyz to answer 503, then sends READY=1 and times the wait for 200,
// polling /readyz as fast as one HTTP/1.1 connection allows. It prints the
// distribution; the poll itself is in each figure (about as long as one
// GET on localhost).
//
//	scripts/build && go run ./bench/notify -lfinit bin/lfinit -n 1000
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"time"
)

func main() {
	lfinit := flag.String("lfinit", "bin/lfinit", "the lfinit binary to measure")
	n := flag.Int("n", 1000, "rounds")
	child := flag.String("child", "", "(internal) run as lfinit's child, polling this /readyz address")
	flag.Parse()
	if *child != "" {
		os.Exit(rounds(*child, *n))
	}
	self, err := os.Executable()
	check(err)
	cmd := exec.Command(*lfinit, "--ready-notify", "abstract", "--metrics-addr", "127.0.0.1:0", "--log-level", "info",
		"--", "sh", "-c", `read addr; exec "$0" -n "$1" -child "$addr"`, self, fmt.Sprint(*n))
	stdin, err := cmd.StdinPipe()
	check(err)
	stderr, err := cmd.StderrPipe()
	check(err)
	cmd.Stdout = os.Stdout
	check(cmd.Start())
	// The address is in lfinit's log, at INFO with port 0; the child reads it on stdin.
	re := regexp.MustCompile(`serving metrics and probes.* addr=(\S+)`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			fmt.Fprintln(stdin, m[1])
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	check(cmd.Wait())
}

// rounds is the child: n rounds of RELOADING=1, 503, READY=1, 200.
func rounds(addr string, n int) int {
	// net reads a leading @ as the abstract namespace, as sd_notify does.
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: os.Getenv("NOTIFY_SOCKET"), Net: "unixgram"})
	check(err)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	until := func(code int) {
		for {
			resp, err := client.Get("http://" + addr + "/readyz")
			check(err)
			resp.Body.Close()
			if resp.StatusCode == code {
				return
			}
		}
	}
	var waits []time.Duration
	for i := 0; i < n; i++ {
		_, err := c.Write([]byte("RELOADING=1"))
		check(err)
		until(http.StatusServiceUnavailable)
		begun := time.Now()
		_, err = c.Write([]byte("READY=1"))
		check(err)
		until(http.StatusOK)
		waits = append(waits, time.Since(begun))
	}
	slices.Sort(waits)
	q := func(p float64) float64 {
		return float64(waits[int(p*float64(len(waits)-1))]) / float64(time.Millisecond)
	}
	fmt.Printf("READY=1 -> /readyz 200: rounds %d  p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  max %.3f ms\n", n, q(0.5), q(0.9), q(0.99), q(1))
	return 0
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "notify:", err)
		os.Exit(1)
	}
}
