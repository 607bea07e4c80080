package supervisor

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
)

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
