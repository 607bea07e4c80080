// Package notify is the systemd notify protocol (sd_notify, NOTIFY_SOCKET)
// as lfinit serves it to its tree: a pure parser of the datagrams a
// service sends (parse.go) and a thin Linux listener that receives them
// with the sender's credentials (listen_linux.go). What a message changes
// (readiness, status) is decided by lfinit's loop, not here.
package notify

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"
)

// MaxDatagram is the largest message read whole, as systemd's
// NOTIFY_BUFFER_MAX (PIPE_BUF): a longer one arrives cut and is garbage.
const MaxDatagram = 4096

// MaxStatus bounds the STATUS= text kept: a status line, not a file.
const MaxStatus = 256

// Kind is what one line of a message said.
type Kind uint8

// The kinds of line a message holds.
const (
	KindReady           Kind = iota // READY=1
	KindStopping                    // STOPPING=1
	KindReloading                   // RELOADING=1
	KindStatus                      // STATUS=…
	KindMainPID                     // MAINPID=N
	KindWatchdog                    // WATCHDOG=1
	KindWatchdogTrigger             // WATCHDOG=trigger
	KindExtendTimeout               // EXTEND_TIMEOUT_USEC=N
	KindErrno                       // ERRNO=N
	KindBusError                    // BUSERROR=…
	KindBarrier                     // BARRIER=1 (its descriptor is closed on receipt)
	KindIgnored                     // FDSTORE=1, FDNAME=, anything unknown: well formed, not served
	KindGarbage                     // malformed: no =, a bad value, NUL bytes, cut, not UTF-8
	NumKinds
)

// kindNames are the metrics' names of the kinds, in Kind order.
var kindNames = [NumKinds]string{"ready", "stopping", "reloading", "status", "mainpid", "watchdog",
	"watchdog_trigger", "extend_timeout", "errno", "buserror", "barrier", "ignored", "garbage"}

// String is the kind's name, as the metrics label it.
func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "garbage"
}

// Kinds is every kind, in order.
func Kinds() []Kind {
	k := make([]Kind, NumKinds)
	for i := range k {
		k[i] = Kind(i)
	}
	return k
}

// Message is what one datagram said. Later lines win over earlier ones
// of the same key, as in systemd.
type Message struct {
	Lines     [NumKinds]uint16 // how many lines of each kind
	Status    string           // the last STATUS=, cut to MaxStatus
	MainPID   int              // the last valid MAINPID=
	Extend    time.Duration    // the last EXTEND_TIMEOUT_USEC=
	Errno     int              // the last ERRNO=
	BusError  string           // the last BUSERROR=, cut to MaxStatus
	Truncated bool             // the datagram was longer than MaxDatagram
}

// Has reports whether the message holds at least one line of kind k.
func (m *Message) Has(k Kind) bool { return m.Lines[k] > 0 }

// Parse reads one datagram. A datagram with a NUL byte, or cut because it
// was longer than MaxDatagram (truncated), is garbage as a whole, as
// systemd drops it; otherwise each line stands alone.
func Parse(b []byte, truncated bool) Message {
	var m Message
	if truncated || len(b) > MaxDatagram || bytes.IndexByte(b, 0) >= 0 {
		m.Truncated = truncated || len(b) > MaxDatagram
		m.Lines[KindGarbage] = 1
		return m
	}
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) > 0 {
			m.Lines[m.line(line)]++
		}
	}
	return m
}

// line reads one KEY=VALUE line into m and says what it was.
func (m *Message) line(line []byte) Kind {
	eq := bytes.IndexByte(line, '=')
	if eq <= 0 || !isKey(line[:eq]) || !utf8.Valid(line) {
		return KindGarbage
	}
	key, value := string(line[:eq]), line[eq+1:]
	switch key {
	case "READY":
		return flag(value, KindReady)
	case "STOPPING":
		return flag(value, KindStopping)
	case "RELOADING":
		return flag(value, KindReloading)
	case "BARRIER":
		return flag(value, KindBarrier)
	case "WATCHDOG":
		if string(value) == "trigger" {
			return KindWatchdogTrigger
		}
		return flag(value, KindWatchdog)
	case "STATUS":
		m.Status = cut(value)
		return KindStatus
	case "BUSERROR":
		m.BusError = cut(value)
		return KindBusError
	case "MAINPID":
		return m.number(value, KindMainPID, 1<<22, func(n uint64) { m.MainPID = int(n) })
	case "ERRNO":
		return m.number(value, KindErrno, 4095, func(n uint64) { m.Errno = int(n) })
	case "EXTEND_TIMEOUT_USEC":
		return m.number(value, KindExtendTimeout, 1<<62/1000, func(n uint64) { m.Extend = time.Duration(n) * time.Microsecond })
	}
	return KindIgnored
}

// flag is k when value is "1", the only value systemd acts on.
func flag(value []byte, k Kind) Kind {
	if string(value) == "1" {
		return k
	}
	return KindGarbage
}

// number parses a decimal in [0, limit] (MAINPID: [1, limit]) and sets it.
func (m *Message) number(value []byte, k Kind, limit uint64, set func(uint64)) Kind {
	n, err := strconv.ParseUint(string(value), 10, 64)
	if err != nil || n > limit || (k == KindMainPID && n == 0) {
		return KindGarbage
	}
	set(n)
	return k
}

// isKey is systemd's rule for an assignment's name: upper-case letters,
// digits and _.
func isKey(k []byte) bool {
	for _, c := range k {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// cut keeps at most MaxStatus bytes of value, never splitting a character,
// and replaces control characters with spaces, so that a status is one
// printable line wherever it goes (logs, status file, termination message).
func cut(value []byte) string {
	if len(value) > MaxStatus {
		n := MaxStatus
		for n > 0 && !utf8.RuneStart(value[n]) {
			n--
		}
		value = value[:n]
	}
	out := []byte(string(value))
	for i, c := range out {
		if c < 0x20 || c == 0x7f {
			out[i] = ' '
		}
	}
	return string(out)
}
