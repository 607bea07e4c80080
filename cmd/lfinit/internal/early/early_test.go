package early

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/light-fabric/lfinit/forward"
)

// sorted is list as sorted signal numbers.
func sorted(list ...[]os.Signal) []syscall.Signal {
	var out []syscall.Signal
	for _, l := range list {
		for _, s := range l {
			out = append(out, s.(syscall.Signal))
		}
	}
	slices.Sort(out)
	return out
}

// without is list less drop.
func without(list []syscall.Signal, drop syscall.Signal) []syscall.Signal {
	return slices.DeleteFunc(slices.Clone(list), func(s syscall.Signal) bool { return s == drop })
}

func TestUrgentIsForwardsUrgent(t *testing.T) {
	want := slices.Sorted(slices.Values(forward.Urgent))
	if got := sorted(fatal, stops); !slices.Equal(got, want) {
		t.Errorf("fatal+stops = %v, forward.Urgent = %v", got, want)
	}
}

func TestCaughtIsForwardsCaught(t *testing.T) {
	want := without(slices.Sorted(slices.Values(forward.Caught)), syscall.SIGCHLD)
	got := sorted(fatal, stops, rest())
	if !slices.Equal(got, want) {
		t.Errorf("fatal+stops+rest = %v\nforward.Caught less SIGCHLD = %v", got, want)
	}
	if len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("a signal is caught twice: %v", got)
	}
	if !slices.Contains(forward.Caught, syscall.SIGCHLD) {
		t.Error("forward.Caught has no SIGCHLD, which early catches on Child")
	}
}

func TestDefaultShutdownFirst(t *testing.T) {
	n := len(forward.DefaultShutdown)
	if got := sorted(fatal[:n]); !slices.Equal(got, slices.Sorted(slices.Values(forward.DefaultShutdown))) {
		t.Errorf("the first %d fatal signals are %v, not the default shutdown signals %v", n, got, forward.DefaultShutdown)
	}
}

// TestCaughtOnChannels checks that once Done is closed the signals reach
// their channels: a fatal one, a relayed one and SIGCHLD.
func TestCaughtOnChannels(t *testing.T) {
	<-Done
	for _, c := range []struct {
		sig syscall.Signal
		ch  chan os.Signal
	}{{syscall.SIGUSR1, Relayed}, {syscall.SIGTERM, Relayed}, {syscall.SIGCHLD, Child}} {
		if err := syscall.Kill(os.Getpid(), c.sig); err != nil {
			t.Fatal(err)
		}
		if got := <-c.ch; got != c.sig {
			t.Errorf("sent %v, got %v", c.sig, got)
		}
	}
}

// TestFewImports keeps early among the first packages Go initialises:
// each import of its own is one more package to wait for.
func TestFewImports(t *testing.T) {
	allowed := map[string]bool{"os": true, "os/signal": true, "syscall": true, "unsafe": true}
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); !allowed[p] {
				t.Errorf("%s imports %s: early imports only os, os/signal, syscall and unsafe", name, p)
			}
		}
	}
}
