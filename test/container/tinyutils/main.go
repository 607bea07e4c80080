// Command tinyutils stands in for the few programs the FROM scratch test
// image needs, chosen by the name it is run as: /bin/true and /bin/sleep
// (test/helper's -orphans starts those two, and a scratch image has no
// coreutils), /bin/each (a child that leaves processes behind and exits 0
// when the test says so), /bin/pidfd-errno (what a seccomp profile
// answers to pidfd_open) and /bin/alloc (a service that takes memory until
// the kernel's OOM killer ends it).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	switch name := filepath.Base(os.Args[0]); name {
	case "true":
		os.Exit(0)
	case "sleep":
		if len(os.Args) != 2 {
			fmt.Fprintln(os.Stderr, "usage: sleep SECONDS")
			os.Exit(2)
		}
		s, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil || s < 0 {
			fmt.Fprintf(os.Stderr, "sleep: bad duration %q\n", os.Args[1])
			os.Exit(2)
		}
		time.Sleep(time.Duration(s * float64(time.Second)))
	case "each":
		os.Exit(each(os.Args[1:]))
	case "pidfd-errno":
		os.Exit(pidfdErrno())
	case "alloc":
		alloc()
	default:
		fmt.Fprintf(os.Stderr, "tinyutils: run me as true, sleep, each, pidfd-errno or alloc, not %q\n", name)
		os.Exit(2)
	}
}

// each N FILE PROGRAM ARGS...: runs PROGRAM ARGS N times in turn, each to
// its end, with every {} in ARGS replaced by the run's number (1..N); then
// waits until FILE exists and exits 0. With test/helper -daemon as PROGRAM
// it leaves N daemons in sessions of their own, and exits when told to.
func each(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: each N FILE PROGRAM [ARGS...]")
		return 2
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 0 {
		fmt.Fprintf(os.Stderr, "each: bad count %q\n", args[0])
		return 2
	}
	for i := 1; i <= n; i++ {
		argv := make([]string, len(args)-3)
		for j, a := range args[3:] {
			argv[j] = strings.ReplaceAll(a, "{}", strconv.Itoa(i))
		}
		cmd := exec.Command(args[2], argv...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "each: run %d of %s: %v\n", i, args[2], err)
			return 1
		}
	}
	for {
		if _, err := os.Stat(args[1]); err == nil {
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pidfdErrno prints the errno number pidfd_open of its own pid fails with,
// 0 when it succeeds.
func pidfdErrno() int {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err == nil {
		unix.Close(fd)
		fmt.Println(0)
		return 0
	}
	errno, ok := err.(unix.Errno)
	if !ok {
		fmt.Fprintln(os.Stderr, "pidfd-errno:", err)
		return 1
	}
	fmt.Println(int(errno))
	return 0
}

// alloc takes memory 1 MiB at a time, touching every page so that it is
// resident, until it is killed; after 4 GiB it gives up and exits 3.
func alloc() {
	var kept [][]byte
	for range 4096 {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		kept = append(kept, b)
	}
	fmt.Fprintf(os.Stderr, "alloc: %d MiB and not killed\n", len(kept))
	os.Exit(3)
}
