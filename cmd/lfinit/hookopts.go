package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// hookValue is --on-shutdown: a command in exec form, so that it runs
// FROM scratch without a shell. A value that starts with "[" is a JSON
// array of strings, as in a Dockerfile's exec form; any other value is
// one program with no arguments.
type hookValue struct{ argv *[]string }

func (v hookValue) String() string {
	if v.argv == nil || len(*v.argv) == 0 {
		return ""
	}
	b, _ := json.Marshal(*v.argv)
	return string(b)
}

func (v hookValue) Set(s string) error {
	argv, err := parseHook(s)
	if err == nil {
		*v.argv = argv
	}
	return err
}

// parseHook reads a hook's command line; the empty value turns it off.
func parseHook(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return nil, nil
	case strings.HasPrefix(s, "["):
		var argv []string
		if err := json.Unmarshal([]byte(s), &argv); err != nil {
			return nil, fmt.Errorf("%q is not a JSON array of strings, e.g. [\"/bin/deregister\",\"--id\",\"web-1\"]", s)
		}
		if len(argv) == 0 || argv[0] == "" {
			return nil, errors.New("the JSON array must start with the program to run")
		}
		return argv, nil
	case strings.ContainsAny(s, " \t\n"):
		// Never split on spaces: that is a shell's job, and there may be none.
		return nil, fmt.Errorf("%q has spaces: give a program with arguments as a JSON array, e.g. [\"/bin/deregister\",\"--id\",\"web-1\"]", s)
	}
	return []string{s}, nil
}

// checkHook fixes the hook's timeout: --on-shutdown-timeout, or the drain
// delay by default. The stop signal waits for the hook, so its timeout
// must be shorter than the grace; a timeout of 0 would leave it no time.
func (c *config) checkHook() error {
	b := &c.opts.Budget
	switch {
	case len(c.hook) == 0 && c.hookTimeout > 0:
		return usagef("--on-shutdown-timeout is set but --on-shutdown is not: give the hook's command")
	case len(c.hook) == 0:
		return nil
	case c.hookTimeout == 0 && b.DrainDelay == 0:
		return usagef("--on-shutdown needs a time to run: set --on-shutdown-timeout (its default is --drain-delay, which is 0)")
	}
	timeout := c.hookTimeout
	if timeout == 0 {
		timeout = b.DrainDelay
	}
	if timeout >= b.Grace {
		return usagef("--on-shutdown-timeout %v must be shorter than --grace %v: the stop signal waits for the hook", timeout, b.Grace)
	}
	b.Hook = timeout
	return nil
}
