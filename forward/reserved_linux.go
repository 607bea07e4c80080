package forward

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// IgnoreUnrelayable sets the signals of Unrelayable (32 and 34: the Go
// runtime installs no handler, so signal.Notify has no effect and their
// default action would kill lfinit when it is not PID 1) to SIG_IGN. Call
// it only after the child is started: an ignored disposition survives
// exec, and the child must start with defaults.
func IgnoreUnrelayable() error {
	act := kernelSigaction{handler: 1} // SIG_IGN
	for _, sig := range Unrelayable {
		_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, sigsetSize, 0, 0)
		if errno != 0 {
			return errno
		}
	}
	return nil
}
