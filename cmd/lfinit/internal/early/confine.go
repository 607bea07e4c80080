package early

import (
	"os"
	"syscall"
	"unsafe"
)

// Each signal.Notify of a new signal is a round trip to the runtime's
// signal-mask thread: two thread hand-offs. Where an idle CPU sleeps (a
// virtual machine's vCPU), a hand-off to another CPU costs tens of µs,
// and the 55 round trips of lfinit's start, beside the packages'
// initialisation, cost a millisecond. For their time, every thread but
// the initialising one is confined to one CPU other than the one it runs
// on: there the hand-offs are plain context switches, and the
// initialisation keeps its own CPU. Then every thread gets its mask back,
// before the child can start (Done), so the child inherits the CPUs
// lfinit was started with.

// cpuSet is a kernel CPU mask of up to 1,024 CPUs (glibc's cpu_set_t), in
// words of the size of the kernel's unsigned long.
type cpuSet [1024 / wordBits]uint

const wordBits = 8 * int(unsafe.Sizeof(uint(0)))

func (s *cpuSet) has(cpu int) bool { return s[cpu/wordBits]&(1<<(cpu%wordBits)) != 0 }
func (s *cpuSet) set(cpu int)      { s[cpu/wordBits] |= 1 << (cpu % wordBits) }

// tripsCPU is the CPU for the round trips: the highest of s other than
// current; ok is false when s has no other.
func tripsCPU(s cpuSet, current int) (trips cpuSet, ok bool) {
	for cpu := len(s)*wordBits - 1; cpu >= 0; cpu-- {
		if cpu != current && s.has(cpu) {
			trips.set(cpu)
			return trips, true
		}
	}
	return trips, false
}

// confinement is the mask every thread had before confine.
type confinement struct {
	saved cpuSet
	on    bool
}

// confine confines every thread but the caller to one CPU other than the
// caller's; it does nothing where a step fails (one CPU, no /proc, a
// seccomp profile that denies the calls).
func confine() confinement {
	saved, ok := affinity(0)
	if !ok {
		return confinement{}
	}
	current, ok := currentCPU()
	if !ok {
		return confinement{}
	}
	trips, ok := tripsCPU(saved, current)
	tids := threads()
	if !ok || len(tids) == 0 {
		return confinement{}
	}
	self := syscall.Gettid()
	for _, tid := range tids {
		if tid != self {
			setAffinity(tid, trips)
		}
	}
	return confinement{saved: saved, on: true}
}

// release gives every thread, including those started meanwhile (which
// inherit their creator's mask), the saved mask back; a pass that finds
// none to change ends it. The passes are bounded: a cpuset changed
// meanwhile by the container engine makes the kernel keep its own mask.
func (c confinement) release() {
	for pass := 0; c.on && pass < 4; pass++ {
		changed := false
		for _, tid := range threads() {
			if m, ok := affinity(tid); ok && m != c.saved {
				setAffinity(tid, c.saved)
				changed = true
			}
		}
		if !changed {
			return
		}
	}
}

// currentCPU is the CPU the calling thread runs on.
func currentCPU() (int, bool) {
	var cpu uint32
	_, _, e := syscall.RawSyscall(sysGetcpu, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	return int(cpu), e == 0
}

// affinity is thread tid's CPU mask (0: the caller's).
func affinity(tid int) (cpuSet, bool) {
	var s cpuSet
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, uintptr(tid), unsafe.Sizeof(s), uintptr(unsafe.Pointer(&s)))
	return s, e == 0
}

// setAffinity sets thread tid's CPU mask; a thread gone meanwhile is no error
// worth telling.
func setAffinity(tid int, s cpuSet) {
	syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(s), uintptr(unsafe.Pointer(&s)))
}

// threads lists lfinit's threads, nil when /proc cannot say.
func threads() []int {
	f, err := os.Open("/proc/self/task")
	if err != nil {
		return nil
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil
	}
	tids := make([]int, 0, len(names))
	for _, n := range names {
		if tid := atoi(n); tid > 0 {
			tids = append(tids, tid)
		}
	}
	return tids
}

// atoi reads a positive decimal number, -1 for anything else (strconv
// would be one more import to initialise first).
func atoi(s string) int {
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' || n > 1<<30 {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	if s == "" {
		return -1
	}
	return n
}
