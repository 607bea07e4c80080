package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cand is one contender of a measurement: an init, or the floor (no init).
type cand struct {
	name    string
	prefix  []string // the init and its options, before the child; nil for the floor
	noChild bool     // prefix is the whole command (the Go floor of the idle run)
}

// floorName names the no-wrapper runs every latency is measured against.
const floorName = "no init (floor)"

// withFloor puts the floor in front of the inits.
func withFloor(inits []initSpec) []cand {
	cs := []cand{{name: floorName}}
	for _, i := range inits {
		cs = append(cs, cand{name: i.name, prefix: i.argv})
	}
	return cs
}

// shuffled returns cs in a random order: each round runs every contender
// once, in a new order, so drift and noise fall on all of them alike.
func shuffled(rng *rand.Rand, cs []cand) []cand {
	out := append([]cand{}, cs...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// benchStartup times `unshare … INIT /bin/true` against `unshare … /bin/true`
// (milliseconds, fork to wait4), interleaved round by round.
func benchStartup(rng *rand.Rand, cs []cand, rounds, warmup int) (map[string]sample, error) {
	unshare, err := exec.LookPath(nsPrefix[0])
	if err != nil {
		return nil, err
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return nil, err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	fd := null.Fd()
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{fd, fd, fd}}
	res := map[string]sample{}
	for r := range warmup + rounds {
		for _, c := range shuffled(rng, cs) {
			argv := append(append(append([]string{unshare}, nsPrefix[1:]...), c.prefix...), truePath)
			t0 := mono()
			pid, err := syscall.ForkExec(unshare, argv, attr)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			var ws syscall.WaitStatus
			for {
				_, err = syscall.Wait4(pid, &ws, 0, nil)
				if err != syscall.EINTR {
					break
				}
			}
			t1 := mono()
			if err != nil || !ws.Exited() || ws.ExitStatus() != 0 {
				return nil, fmt.Errorf("%s: %s exited with %v (%v)", c.name, strings.Join(argv, " "), ws, err)
			}
			if r >= warmup {
				res[c.name] = append(res[c.name], float64(t1-t0)/1e6)
			}
		}
	}
	return res, nil
}

// forwardResult holds the forwarding latencies, in microseconds.
type forwardResult struct {
	term, relay map[string]sample
}

// benchForward measures, for each contender, kill(SIGUSR1) x relays and
// then kill(SIGTERM) to PID 1 until the child's sigwaitinfo returned (its
// own CLOCK_MONOTONIC stamp). For the floor the child is PID 1 itself.
func benchForward(rng *rand.Rand, cs []cand, rounds, relays int, settle time.Duration, sigwaitBin string) (forwardResult, error) {
	res := forwardResult{term: map[string]sample{}, relay: map[string]sample{}}
	for range rounds {
		for _, c := range shuffled(rng, cs) {
			term, relay, err := forwardOnce(c, relays, settle, sigwaitBin)
			if err != nil {
				return res, fmt.Errorf("forwarding through %s: %w", c.name, err)
			}
			res.term[c.name] = append(res.term[c.name], term)
			res.relay[c.name] = append(res.relay[c.name], relay...)
		}
	}
	return res, nil
}

// forwardOnce is one round of benchForward for one contender.
func forwardOnce(c cand, relays int, settle time.Duration, sigwaitBin string) (float64, []float64, error) {
	in, err := start(c.prefix, []string{sigwaitBin}, startOpts{})
	if err != nil {
		return 0, nil, err
	}
	defer in.stop()
	if _, err := in.expect("ready", 5*time.Second); err != nil {
		return 0, nil, err
	}
	sleep(settle)
	var relay []float64
	for range relays {
		lat, err := signalToStamp(in, syscall.SIGUSR1)
		if err != nil {
			return 0, nil, err
		}
		relay = append(relay, lat)
		sleep(time.Millisecond)
	}
	term, err := signalToStamp(in, syscall.SIGTERM)
	if err != nil {
		return 0, nil, err
	}
	return term, relay, in.finish()
}

// signalToStamp signals PID 1 and reads the child's stamp: the latency in µs.
func signalToStamp(in *instance, sig syscall.Signal) (float64, error) {
	t0 := mono()
	if err := in.signal(sig); err != nil {
		return 0, err
	}
	l, err := in.line(5 * time.Second)
	if err != nil {
		return 0, err
	}
	got, stamp, ok := strings.Cut(l, " ")
	ns, err := strconv.ParseInt(stamp, 10, 64)
	if !ok || err != nil || got != strconv.Itoa(int(sig)) {
		return 0, fmt.Errorf("unexpected line %q from the child after %v", l, sig)
	}
	return float64(ns-t0) / 1e3, nil
}

// benchShutdown measures kill(SIGTERM) to PID 1 until PID 1 has exited
// (µs), with a child that dies of SIGTERM. The floor is the signal-waiting
// child as PID 1 itself, exiting on SIGTERM.
func benchShutdown(rng *rand.Rand, cs []cand, rounds int, settle time.Duration, sigwaitBin, pauseBin string) (map[string]sample, error) {
	res := map[string]sample{}
	for range rounds {
		for _, c := range shuffled(rng, cs) {
			child := []string{pauseBin}
			if c.prefix == nil {
				child = []string{sigwaitBin}
			}
			lat, err := shutdownOnce(c, child, settle)
			if err != nil {
				return nil, fmt.Errorf("shutdown of %s: %w", c.name, err)
			}
			res[c.name] = append(res[c.name], lat)
		}
	}
	return res, nil
}

// shutdownOnce is one round of benchShutdown for one contender.
func shutdownOnce(c cand, child []string, settle time.Duration) (float64, error) {
	in, err := start(c.prefix, child, startOpts{})
	if err != nil {
		return 0, err
	}
	defer in.stop()
	if _, err := in.expect("ready", 5*time.Second); err != nil {
		return 0, err
	}
	sleep(settle)
	t0 := mono()
	if err := in.signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	if err := in.waitExit(5 * time.Second); err != nil {
		return 0, err
	}
	t1 := mono()
	return float64(t1-t0) / 1e3, in.finish()
}
