package core

import (
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
