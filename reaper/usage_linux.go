package reaper

import (
	"time"

	"golang.org/x/sys/unix"
)

// Usage is what a process cost, as wait4 and getrusage tell it.
type Usage struct {
	PeakRSS      uint64        // bytes: the largest resident set it had
	User, System time.Duration // CPU time in user space and in the kernel
}

// UsageOf reads a kernel rusage (ru_maxrss is in KiB on Linux).
func UsageOf(ru *unix.Rusage) Usage {
	return Usage{
		PeakRSS: uint64(max(ru.Maxrss, 0)) * 1024,
		User:    time.Duration(ru.Utime.Nano()),
		System:  time.Duration(ru.Stime.Nano()),
	}
}

// TreeUsage is what every process lfinit reaped cost, together
// (RUSAGE_CHILDREN): CPU time added up, and the largest peak RSS of any.
func TreeUsage() (Usage, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		return Usage{}, err
	}
	return UsageOf(&ru), nil
}
