// Package forward knows which signals lfinit relays, what they are called,
// and how one is delivered to the child or to its process group.
package forward

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// RTMin is SIGRTMIN as users see it (glibc reserves 32 and 33).
const RTMin = 34

// Aliases accepted by Parse besides the canonical names.
var aliases = map[string]syscall.Signal{"IOT": syscall.SIGABRT, "POLL": syscall.SIGIO, "CLD": syscall.SIGCHLD}

// Name is the conventional name of sig: SIGTERM, SIGRTMIN+3, SIGRTMAX.
func Name(sig syscall.Signal) string {
	if n := lookup(&names, sig); n != "" {
		return n
	}
	switch {
	case sig == RTMin:
		return "SIGRTMIN"
	case sig == RTMax:
		return "SIGRTMAX"
	case sig > RTMin && sig <= (RTMin+RTMax)/2:
		return fmt.Sprintf("SIGRTMIN+%d", int(sig)-RTMin)
	case sig > RTMin && sig < RTMax:
		return fmt.Sprintf("SIGRTMAX-%d", RTMax-int(sig))
	}
	return "SIG" + strconv.Itoa(int(sig))
}

// Reason is the word for why a shutdown began on sig: terminate, interrupt,
// hangup… and signal-N for the others.
func Reason(sig syscall.Signal) string {
	if r := lookup(&reasons, sig); r != "" {
		return r
	}
	return strings.ToLower(strings.TrimPrefix(Name(sig), "SIG"))
}

// Parse reads a signal written as TERM, SIGTERM, sigterm, 15 or RTMIN+2.
func Parse(s string) (syscall.Signal, error) {
	word := strings.ToUpper(strings.TrimSpace(s))
	if n, err := strconv.Atoi(word); err == nil {
		if n < 1 || n > RTMax {
			return 0, fmt.Errorf("signal number %d is out of range 1-%d", n, RTMax)
		}
		return syscall.Signal(n), nil
	}
	word = strings.TrimPrefix(word, "SIG")
	if sig, ok := aliases[word]; ok {
		return sig, nil
	}
	for sig, n := range names {
		if n == "SIG"+word {
			return syscall.Signal(sig), nil
		}
	}
	if sig, ok := parseRealtime(word); ok {
		return sig, nil
	}
	return 0, fmt.Errorf("unknown signal %q (use a name such as TERM or SIGTERM, or a number such as 15)", s)
}

func parseRealtime(word string) (syscall.Signal, bool) {
	base, sign, rest := word, 0, ""
	if i := strings.IndexAny(word, "+-"); i >= 0 {
		base, rest = word[:i], word[i+1:]
		sign = 1
		if word[i] == '-' {
			sign = -1
		}
	}
	off := 0
	if sign != 0 {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return 0, false
		}
		off = sign * n
	}
	var sig int
	switch {
	case base == "RTMIN" && off >= 0:
		sig = RTMin + off
	case base == "RTMAX" && off <= 0:
		sig = RTMax + off
	default:
		return 0, false
	}
	if sig < RTMin || sig > RTMax {
		return 0, false
	}
	return syscall.Signal(sig), true
}
