package supervisor

import (
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkMachineRelay is the decision for a relayed signal (SIGUSR1 to a
// ready child): what the loop computes before it forwards.
func BenchmarkMachineRelay(b *testing.B) {
	m := newMachine(8*s, 250*ms, 0)
	m.Started(t0, true)
	b.ReportAllocs()
	for b.Loop() {
		if acts := m.Signal(at(s), syscall.SIGUSR1); len(acts) != 1 {
			b.Fatalf("actions %s", show(acts))
		}
	}
}

// BenchmarkMachineShutdown is the decision for the first SIGTERM: the
// budget, the phases and the stop forward (a fresh machine each time).
func BenchmarkMachineShutdown(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m := newMachine(8*s, 250*ms, 0)
		m.Started(t0, true)
		if acts := m.Signal(at(s), syscall.SIGTERM); !strings.Contains(show(acts), "stop:SIGTERM") {
			b.Fatalf("actions %s", show(acts))
		}
	}
}

// BenchmarkSignalHop is kill(getpid(), SIGUSR1) until the signal arrives on
// a signal.Notify channel: the Go runtime's part of every forward (handler,
// os/signal's goroutine, the channel), which no code in lfinit can shorten.
func BenchmarkSignalHop(b *testing.B) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	defer signal.Stop(c)
	pid := os.Getpid()
	for b.Loop() {
		if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
			b.Fatal(err)
		}
		<-c
	}
}
