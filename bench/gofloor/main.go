// Command gofloor is the floor a Go init starts from, for bench/initbench.
//
// Without arguments it is the smallest Go program that can idle as PID 1:
// it handles SIGTERM and sleeps, so its RSS and wake-ups are what any Go
// init (lfinit included) pays for the runtime alone.
//
// With a command (gofloor -- CMD ARGS…) it is the smallest Go init: it
// starts CMD, forwards HUP, INT, QUIT, USR1, USR2 and TERM to it through
// os/signal, reaps every child on SIGCHLD with wait4(-1), and exits with
// CMD's status once CMD is reaped. No logs, options or deadlines: whatever
// lfinit costs beyond this is lfinit's, not Go's.
//
// Built with -tags deps (deps.go) it also links lfinit's dependencies and
// does nothing with them: the floor of a Go init with lfinit's stack.
// Built with -tags 'deps lfcode' (lfcode.go) it also links lfinit's own
// code, never called: what lfinit's binary costs (bench/codefloor).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		idle()
		return
	}
	os.Exit(initLoop(args))
}

func idle() {
	c := make(chan os.Signal, 1)
	// As PID 1 a signal with the default disposition is dropped: handle it.
	signal.Notify(c, syscall.SIGTERM)
	os.Stdout.WriteString("ready\n")
	<-c
}

func initLoop(argv []string) int {
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM)
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		os.Stderr.WriteString("gofloor: " + err.Error() + "\n")
		return 127
	}
	for {
		select {
		case s := <-sigs:
			syscall.Kill(pid, s.(syscall.Signal))
		case <-chld:
			for {
				var ws syscall.WaitStatus
				p, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if err == syscall.EINTR {
					continue
				}
				if err != nil || p <= 0 {
					break
				}
				if p == pid {
					if ws.Signaled() {
						return 128 + int(ws.Signal())
					}
					return ws.ExitStatus()
				}
			}
		}
	}
}
