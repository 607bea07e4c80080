package main

import (
	"fmt"
	"sort"
	"strings"
	"syscall"

	"github.com/light-fabric/lfinit/forward"
)

// rewriteValue collects FROM:TO signal rewrites (TO 0: drop FROM); a comma
// separates several in one value.
type rewriteValue struct {
	m map[syscall.Signal]syscall.Signal
}

func (v rewriteValue) String() string {
	var from []int
	for f := range v.m {
		from = append(from, int(f))
	}
	sort.Ints(from)
	var pairs []string
	for _, f := range from {
		pairs = append(pairs, fmt.Sprintf("%d:%d", f, v.m[syscall.Signal(f)]))
	}
	return strings.Join(pairs, ",")
}

func (v rewriteValue) Set(s string) error {
	for _, pair := range strings.Split(s, ",") {
		from, to, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if !ok {
			return fmt.Errorf("%q is not FROM:TO (e.g. TERM:QUIT, 15:3, or INT:0 to drop INT)", pair)
		}
		f, err := forward.Parse(from)
		if err != nil {
			return err
		}
		if !forward.IsRelayed(f) {
			return fmt.Errorf("%s cannot be caught by lfinit, so it cannot be rewritten", forward.Name(f))
		}
		var t syscall.Signal
		if strings.TrimSpace(to) != "0" {
			if t, err = forward.Parse(to); err != nil {
				return err
			}
		}
		v.m[f] = t
	}
	return nil
}
