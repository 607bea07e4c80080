// Package step is lfinit's exec step: lfinit started again as its own
// child, to set LISTEN_PID (socket activation) and WATCHDOG_PID (the
// service watchdog) to that child's pid and exec the command (Go's
// fork/exec fixes the environment before the child's pid is known). spawn starts it; it runs in this package's init.
//
// The command waits for every package initialised before this one, so it
// imports only os and syscall: Go initialises packages in import path
// order as soon as their imports are, and this one then comes before
// Prometheus and protobuf, whatever else the binary links.
package step

import (
	"os"
	"syscall"
)

// Arg0 is argv[0] of lfinit started as the step (no user names lfinit
// so). The arguments then are: the status descriptor, the shell for a
// file without #! ("" for none), the command's path, and its argv.
const Arg0 = "lfinit-exec-step"

func init() {
	if len(os.Args) >= 5 && os.Args[0] == Arg0 {
		os.Exit(run(os.Args[1:]))
	}
}

// pidVars are the variables that must name the command's own pid:
// socket activation's, and the service watchdog's (--watchdog).
var pidVars = [...]string{"LISTEN_PID", "WATCHDOG_PID"}

// run sets LISTEN_PID and WATCHDOG_PID, where present, and execs the command; it returns only when that
// failed, having written the errno (decimal) to the status descriptor,
// which closes on a successful exec.
func run(args []string) int {
	fd := atoi(args[0])
	if fd < 3 {
		return 127
	}
	syscall.CloseOnExec(fd)
	shell, path, argv := args[1], args[2], args[3:]
	env := os.Environ()
	for i, kv := range env {
		for _, name := range pidVars {
			if len(kv) > len(name) && kv[:len(name)] == name && kv[len(name)] == '=' {
				env[i] = name + "=" + itoa(os.Getpid())
			}
		}
	}
	err := syscall.Exec(path, argv, env)
	if err == syscall.ENOEXEC && shell != "" {
		// A script without #!: the shell reads it, as execvp does.
		err = syscall.Exec(shell, append([]string{shell, path}, argv[1:]...), env)
	}
	errno, _ := err.(syscall.Errno)
	syscall.Write(fd, []byte(itoa(int(errno))))
	return 127
}

// atoi reads a non-negative decimal number, -1 for anything else.
func atoi(s string) int {
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' || n > 1<<20 {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	if s == "" {
		return -1
	}
	return n
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
