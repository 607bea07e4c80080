package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
)

// The measurements only lfinit has: how late the hard deadline's SIGKILL
// lands, and how fast /readyz turns 503. Same approach as bench/observe,
// but with lfinit as a real PID 1.

var addrRE = regexp.MustCompile(`serving metrics and probes.* addr=(\S+)`)

// metricsAddr waits for lfinit's "serving metrics and probes" log line.
func metricsAddr(in *instance) (string, error) {
	timeout := time.After(5 * time.Second)
	for {
		select {
		case l := <-in.stderr:
			if m := addrRE.FindStringSubmatch(l); m != nil {
				return m[1], nil
			}
		case <-timeout:
			return "", errors.New("lfinit did not log its metrics address")
		}
	}
}

// benchDeadline measures, runs times, how late after the hard_deadline
// lfinit published the child (which ignores SIGTERM) is dead, in ms, as
// seen by bench/csrc/deathtime at real-time priority. With scrapers > 0,
// metrics are on and that many goroutines scrape /metrics in a tight loop
// meanwhile: they load the benchmark's own process too, which is why the
// death is not timed here.
func benchDeadline(lfinitBin, pauseBin, deathBin, dir string, runs, scrapers int) (sample, error) {
	var res sample
	for range runs {
		late, err := deadlineOnce(lfinitBin, pauseBin, deathBin, dir, scrapers)
		if err != nil {
			return res, err
		}
		res = append(res, late)
	}
	return res, nil
}

// deadlineOnce is one run of benchDeadline.
func deadlineOnce(lfinitBin, pauseBin, deathBin, dir string, scrapers int) (float64, error) {
	statusPath := filepath.Join(dir, "status.json")
	os.Remove(statusPath)
	prefix := []string{lfinitBin, "--status-file", statusPath, "--grace", "100ms", "--floor", "50ms"}
	if scrapers > 0 {
		prefix = append(prefix, "--metrics-addr", "127.0.0.1:0")
	}
	prefix = append(prefix, "--")
	in, err := start(prefix, []string{pauseBin, "-i"}, startOpts{stderrLines: scrapers > 0})
	if err != nil {
		return 0, err
	}
	defer in.stop()
	addr := ""
	if scrapers > 0 {
		if addr, err = metricsAddr(in); err != nil {
			return 0, err
		}
	}
	if _, err := in.expect("ready", 5*time.Second); err != nil {
		return 0, err
	}
	kids := children(in.pid)
	if len(kids) == 0 {
		return 0, errors.New("lfinit's child is not there")
	}
	death, err := watchDeath(deathBin, kids[0])
	if err != nil {
		return 0, err
	}
	stopScraping := measure.Scrape("http://"+addr+"/metrics", scrapers)
	time.Sleep(50 * time.Millisecond) // let the scrapers get going
	var dead time.Time
	err = in.signal(syscall.SIGTERM)
	if err == nil {
		dead, err = death(5 * time.Second)
	}
	stopScraping()
	if err != nil {
		return 0, err
	}
	if err := in.finish(); err != nil {
		return 0, err
	}
	var st struct {
		HardDeadline *time.Time `json:"hard_deadline"`
	}
	b, err := os.ReadFile(statusPath)
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(b, &st); err != nil || st.HardDeadline == nil {
		return 0, fmt.Errorf("no hard_deadline in the status file (%v)", err)
	}
	return float64(dead.Sub(*st.HardDeadline)) / 1e6, nil
}

// watchDeath starts deathtime on pid and returns, once it watches, a
// function that waits for the instant it saw pid die.
func watchDeath(deathBin string, pid int) (func(time.Duration) (time.Time, error), error) {
	cmd := exec.Command(deathBin, strconv.Itoa(pid))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(timeout time.Duration) (string, error) {
		select {
		case l, ok := <-lines:
			if !ok {
				return "", fmt.Errorf("deathtime exited: %v", cmd.Wait())
			}
			return l, nil
		case <-time.After(timeout):
			cmd.Process.Kill()
			cmd.Wait()
			return "", errors.New("deathtime saw no exit in time")
		}
	}
	if l, err := next(5 * time.Second); err != nil || l != "ready" {
		return nil, fmt.Errorf("deathtime did not start (%q, %v)", l, err)
	}
	return func(timeout time.Duration) (time.Time, error) {
		l, err := next(timeout)
		if err != nil {
			return time.Time{}, err
		}
		cmd.Wait()
		ns, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("deathtime printed %q", l)
		}
		return time.Unix(0, ns), nil
	}, nil
}

// benchFlip measures kill(SIGTERM) to the first 503 from /readyz (ms; an
// upper bound: the arrival of that answer), and the round trip of one
// /readyz request on the same connection (ms), which bounds how finely
// the flip can be seen.
func benchFlip(lfinitBin, pauseBin string, runs int) (flip, rtt sample, err error) {
	for range runs {
		f, r, err := flipOnce(lfinitBin, pauseBin)
		if err != nil {
			return flip, rtt, err
		}
		flip = append(flip, f)
		rtt = append(rtt, r)
	}
	return flip, rtt, nil
}

// flipOnce is one run of benchFlip.
func flipOnce(lfinitBin, pauseBin string) (float64, float64, error) {
	prefix := []string{lfinitBin, "--metrics-addr", "127.0.0.1:0", "--drain-delay", "2s", "--grace", "5s", "--"}
	in, err := start(prefix, []string{pauseBin}, startOpts{stderrLines: true})
	if err != nil {
		return 0, 0, err
	}
	defer in.stop()
	addr, err := metricsAddr(in)
	if err != nil {
		return 0, 0, err
	}
	url := "http://" + addr + "/readyz"
	for deadline := time.Now().Add(5 * time.Second); measure.Status(url) != 200; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return 0, 0, errors.New("lfinit never became ready")
		}
	}
	var rtts sample
	for range 5 {
		t := time.Now()
		measure.Status(url)
		rtts = append(rtts, float64(time.Since(t))/1e6)
	}
	sleep(10 * time.Millisecond)
	sent := time.Now()
	if err := in.signal(syscall.SIGTERM); err != nil {
		return 0, 0, err
	}
	var lat time.Duration
	for {
		if measure.Status(url) == 503 {
			lat = time.Since(sent)
			break
		}
		if time.Since(sent) > 5*time.Second {
			return 0, 0, errors.New("/readyz never answered 503")
		}
	}
	// A second SIGTERM forwards the stop signal at once: the child dies.
	in.signal(syscall.SIGTERM)
	return float64(lat) / 1e6, rtts.q(0.5), in.finish()
}
