package main

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/light-fabric/lfinit/forward"
)

// parseDuration accepts Go durations with a unit, and a bare 0.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("%q needs a unit, e.g. %sms or %ss", s, s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (use a number with a unit: 250ms, 8s, 1m)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	switch {
	case v.d == nil:
		return ""
	case *v.d == 0:
		return "0" // as it is written: a bare 0 needs no unit
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err == nil {
		*v.d = d
	}
	return err
}

// signalValue is one signal; none (when allowed) sets *none.
type signalValue struct {
	sig       *syscall.Signal
	none      *bool
	catchable bool // must be a signal lfinit can catch (a shutdown trigger)
}

func (v signalValue) String() string {
	if v.sig == nil || *v.sig == 0 {
		return ""
	}
	return forward.Name(*v.sig)
}

func (v signalValue) Set(s string) error {
	if v.none != nil && strings.EqualFold(strings.TrimSpace(s), "none") {
		*v.none, *v.sig = true, 0
		return nil
	}
	sig, err := forward.Parse(s)
	if err != nil {
		return err
	}
	if v.catchable && !forward.IsRelayed(sig) {
		return fmt.Errorf("%s cannot be caught and relayed by lfinit", forward.Name(sig))
	}
	*v.sig = sig
	if v.none != nil {
		*v.none = false
	}
	return nil
}

type signalList struct{ sigs *[]syscall.Signal }

func (v signalList) String() string {
	if v.sigs == nil {
		return ""
	}
	var names []string
	for _, s := range *v.sigs {
		names = append(names, strings.TrimPrefix(forward.Name(s), "SIG"))
	}
	return strings.Join(names, ",")
}

func (v signalList) Set(s string) error {
	var out []syscall.Signal
	for _, word := range strings.Split(s, ",") {
		var sig syscall.Signal
		if err := (signalValue{sig: &sig, catchable: true}).Set(word); err != nil {
			return err
		}
		out = append(out, sig)
	}
	*v.sigs = out
	return nil
}

// exitMap collects FROM=TO pairs; a comma separates several in one value.
type exitMap struct{ m map[int]int }

func (v exitMap) String() string { return "" }

func (v exitMap) Set(s string) error {
	for _, pair := range strings.Split(s, ",") {
		from, to, ok := strings.Cut(strings.TrimSpace(pair), "=")
		f, err1 := strconv.Atoi(from)
		t, err2 := strconv.Atoi(to)
		if !ok || err1 != nil || err2 != nil || f < 0 || f > 255 || t < 0 || t > 255 {
			return fmt.Errorf("%q is not FROM=TO with two exit codes 0-255 (e.g. 143=0)", pair)
		}
		v.m[f] = t
	}
	return nil
}

// countValue is a non-negative integer.
type countValue struct{ n *int }

func (v countValue) String() string {
	if v.n == nil {
		return ""
	}
	return strconv.Itoa(*v.n)
}

func (v countValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 1<<16 {
		return fmt.Errorf("%q is not a count of descriptors (0 or more)", s)
	}
	*v.n = n
	return nil
}

type choiceValue struct {
	s       *string
	choices []string
}

func (v choiceValue) String() string { return stringValue{v.s}.String() }

func (v choiceValue) Set(s string) error {
	for _, c := range v.choices {
		if s == c {
			*v.s = s
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", s, strings.Join(v.choices, ", "))
}

// stringValue is a string option.
type stringValue struct{ s *string }

func (v stringValue) String() string {
	if v.s == nil {
		return ""
	}
	return *v.s
}

func (v stringValue) Set(s string) error { *v.s = s; return nil }

// boolValue is a switch: --name alone, or --name=false, or its variable set to a boolean.
type boolValue struct{ b *bool }

func (v boolValue) String() string {
	if v.b == nil {
		return ""
	}
	return strconv.FormatBool(*v.b)
}

func (v boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%q is not a boolean (true or false)", s)
	}
	*v.b = b
	return nil
}

// IsBoolFlag lets --name stand without a value.
func (v boolValue) IsBoolFlag() bool { return true }
