//go:build linux && (amd64 || arm64)

package sender

import (
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The main goroutine keeps the main thread, whose tid is the pid: the
// only thread rt_sigqueueinfo lets say that the kernel, or kill from
// another PID namespace, sent a signal. onMain runs a function there.
func init() { runtime.LockOSThread() }

var onMain = make(chan func())

func TestMain(m *testing.M) {
	done := make(chan int)
	go func() { done <- m.Run() }()
	for {
		select {
		case f := <-onMain:
			f()
		case code := <-done:
			os.Exit(code)
		}
	}
}

// caught catches sig for the test, records its senders, and returns the
// channel it arrives on.
func caught(t *testing.T, sig syscall.Signal) chan os.Signal {
	t.Helper()
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, sig)
	t.Cleanup(func() { signal.Stop(ch) })
	if err := Record([]syscall.Signal{sig}); err != nil {
		t.Fatalf("Record: %v", err)
	}
	return ch
}

// arrive waits for sig on ch: the runtime's handler still runs behind the
// trampoline.
func arrive(t *testing.T, ch chan os.Signal, sig syscall.Signal) {
	t.Helper()
	select {
	case got := <-ch:
		if got != sig {
			t.Fatalf("got %v, want %v", got, sig)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%v never reached os/signal behind the trampoline", sig)
	}
}

func TestSenderOfKillFromSelfAndChild(t *testing.T) {
	ch := caught(t, syscall.SIGUSR1)
	if err := unix.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	arrive(t, ch, syscall.SIGUSR1)
	if got, want := Of(syscall.SIGUSR1), (Sender{Kind: Process, Pid: os.Getpid(), Uid: uint32(os.Getuid())}); got != want {
		t.Errorf("after kill from the test itself: %+v, want %+v", got, want)
	}
	// A process of its own: the trampoline records every sending, the last one wins.
	cmd := exec.Command("/bin/sh", "-c", "kill -USR1 "+strconv.Itoa(os.Getpid()))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := cmd.Process.Pid
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	arrive(t, ch, syscall.SIGUSR1)
	if got, want := Of(syscall.SIGUSR1), (Sender{Kind: Process, Pid: child, Uid: uint32(os.Getuid())}); got != want {
		t.Errorf("after kill from sh: %+v, want %+v", got, want)
	}
}

func TestSenderOfTgkill(t *testing.T) {
	ch := caught(t, syscall.SIGUSR2)
	if err := unix.Tgkill(os.Getpid(), unix.Gettid(), syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	arrive(t, ch, syscall.SIGUSR2)
	if got, want := Of(syscall.SIGUSR2), (Sender{Kind: Process, Pid: os.Getpid(), Uid: uint32(os.Getuid())}); got != want {
		t.Errorf("after tgkill: %+v, want %+v", got, want)
	}
}

// siginfo is the start of the kernel's siginfo on 64-bit Linux.
type siginfo struct {
	signo, errno, code, _ int32
	pid                   int32
	uid                   uint32
	_                     [112]byte
}

// queue sends sig to the test itself with the siginfo the kernel would
// write for code, pid and uid: rt_sigqueueinfo lets a process say anything
// to itself, so the kernel's own kinds are reached without its help.
func queue(t *testing.T, sig syscall.Signal, code, pid int32, uid uint32) {
	t.Helper()
	info := siginfo{signo: int32(sig), code: code, pid: pid, uid: uid}
	var errno syscall.Errno
	ran := make(chan struct{})
	onMain <- func() {
		defer close(ran)
		_, _, errno = unix.RawSyscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(os.Getpid()), uintptr(sig), uintptr(unsafe.Pointer(&info)))
	}
	<-ran
	if errno != 0 {
		t.Fatalf("rt_sigqueueinfo: %v", errno)
	}
}

func TestSenderKindsAsTheKernelWritesThem(t *testing.T) {
	sig := syscall.Signal(40) // a real-time signal nobody else uses
	ch := caught(t, sig)
	for _, c := range []struct {
		name string
		code int32
		pid  int32
		uid  uint32
		want Sender
	}{
		{"kill from outside the PID namespace", siUser, 0, 0, Sender{Kind: Outside}},
		{"the kernel", 0x80, 0, 0, Sender{Kind: Kernel}},
		{"sigqueue from a process", siQueue, 4242, 1000, Sender{Kind: Process, Pid: 4242, Uid: 1000}},
	} {
		queue(t, sig, c.code, c.pid, c.uid)
		arrive(t, ch, sig)
		if got := Of(sig); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestRecordLeavesDefaultAndIgnoredAlone(t *testing.T) {
	sig := syscall.Signal(41)
	signal.Ignore(sig)
	defer signal.Reset(sig)
	if err := Record([]syscall.Signal{sig}); err != nil {
		t.Fatal(err)
	}
	var act sigaction
	if err := rtSigaction(sig, nil, &act); err != nil {
		t.Fatal(err)
	}
	if act.handler != 1 {
		t.Errorf("an ignored signal's handler is %#x after Record, want SIG_IGN", act.handler)
	}
}

func TestRecordTwiceChainsOnce(t *testing.T) {
	sig := syscall.Signal(42)
	ch := caught(t, sig)
	before := next[sig]
	if err := Record([]syscall.Signal{sig}); err != nil {
		t.Fatal(err)
	}
	if next[sig] != before || next[sig] == trampolineAddr() {
		t.Fatalf("a second Record chained the trampoline to itself: next %#x, trampoline %#x", next[sig], trampolineAddr())
	}
	queue(t, sig, siUser, 0, 0)
	arrive(t, ch, sig)
}
