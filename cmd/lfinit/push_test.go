package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/cmd/lfinit/internal/push"
)

func TestPushFlags(t *testing.T) {
	c, err := parseArgs([]string{"--push-gateway", "http://pgw:9091", "--push-grouping", "cluster=prod,team=a", "--push-grouping", "zone=z1", "app"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.push.Job != "lfinit" || c.push.Timeout != push.DefaultTimeout || len(c.push.Grouping) != 3 || c.push.Grouping["zone"] != "z1" {
		t.Errorf("push config %+v", c.push)
	}
	// The push timeout counts in the budget only when there is a push.
	if c.opts.Budget.Push != push.DefaultTimeout {
		t.Errorf("budget push = %v", c.opts.Budget.Push)
	}
	c, _ = parseArgs([]string{"app"}, noEnv)
	if c.opts.Budget.Push != 0 {
		t.Errorf("budget push without a gateway = %v", c.opts.Budget.Push)
	}
	c, err = parseArgs([]string{"app"}, envOf("LFINIT_PUSH_GATEWAY", "https://pgw", "LFINIT_PUSH_JOB", "edge", "LFINIT_PUSH_TIMEOUT", "300ms"))
	if err != nil || c.push.Gateway != "https://pgw" || c.push.Job != "edge" || c.opts.Budget.Push != 300*time.Millisecond {
		t.Errorf("from variables: %+v %v", c.push, err)
	}
}

func TestPushUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--push-gateway", "pgw:9091", "app"}, "base URL"},
		{[]string{"--push-gateway", "ftp://pgw", "app"}, "base URL"},
		{[]string{"--push-gateway", "http://pgw", "--push-job", "", "app"}, "--push-job: the job name of the push cannot be empty"},
		{[]string{"--push-gateway", "http://pgw:99999", "app"}, "base URL"},
		{[]string{"--push-gateway", "http://pgw", "--push-timeout", "0", "app"}, "--push-timeout"},
		{[]string{"--push-grouping", "cluster", "app"}, "NAME=VALUE"},
		{[]string{"--push-grouping", "cluster=", "app"}, "NAME=VALUE"},
		{[]string{"--push-grouping", "1x=a", "app"}, "label name"},
		{[]string{"--push-grouping", "job=a", "app"}, "lfinit's own series"},
		{[]string{"--push-grouping", "signal=a", "app"}, "lfinit's own series"},
		{[]string{"--push-grouping", "cluster=" + strings.Repeat("x", 1025), "app"}, `the value of label "cluster" is 1025 bytes; the limit is 1 KiB (1024 bytes)`},
		{[]string{"--push-grouping", strings.Repeat("n", 129) + "=a", "app"}, "is 129 bytes; the limit is 128 bytes"},
		{[]string{"--push-grouping", manyLabels(17), "app"}, "more than 16 grouping labels"},
		{[]string{"--push-grouping", manyLabels(10), "--push-grouping", "x1=a,x2=a,x3=a,x4=a,x5=a,x6=a,x7=a", "app"}, "more than 16 grouping labels"},
		// grace 8s + floor 250ms + push 1s + allowance 1s = 10.25s.
		{[]string{"--push-gateway", "http://pgw", "--stop-timeout", "10s", "app"}, "push 1s"},
	} {
		_, err := parseArgs(tc.args, noEnv)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.msg, tc.msg) {
			t.Errorf("parseArgs(%q) = %v, want a usage error saying %q", tc.args, err, tc.msg)
		}
	}
}

// manyLabels is n grouping labels l0=v … in one value.
func manyLabels(n int) string {
	var pairs []string
	for i := range n {
		pairs = append(pairs, fmt.Sprintf("l%d=v", i))
	}
	return strings.Join(pairs, ",")
}

// The bounds of --push-grouping are inclusive, and a name given twice
// counts once.
func TestPushGroupingAtItsBounds(t *testing.T) {
	for _, args := range [][]string{
		{"--push-grouping", "cluster=" + strings.Repeat("x", 1024)},
		{"--push-grouping", strings.Repeat("n", 128) + "=a"},
		{"--push-grouping", manyLabels(16)},
		{"--push-grouping", manyLabels(16), "--push-grouping", manyLabels(16)},
	} {
		if _, err := parseArgs(append(args, "app"), noEnv); err != nil {
			t.Errorf("parseArgs(%.60q…) = %v, want it accepted", args, err)
		}
	}
}

func TestBudgetCountsThePush(t *testing.T) {
	var out, errOut strings.Builder
	code := runSubcommand("budget", []string{"--stop-timeout=10s"}, envOf("LFINIT_PUSH_GATEWAY", "http://pgw"), &out, &errOut)
	if code != 1 || !strings.Contains(out.String(), "push 1s") || !strings.Contains(out.String(), "terminationGracePeriodSeconds: 11") ||
		!strings.Contains(out.String(), "t0+9.25s") {
		t.Errorf("budget with a push: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := runSubcommand("budget", []string{"--stop-timeout=10s"}, noEnv, &out, &errOut); code != 0 || strings.Contains(out.String(), "push") {
		t.Errorf("budget without a push: exit %d\n%s", code, out.String())
	}
}

func TestUnwritableTerminationLogFailsAtStartup(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{dir + "/missing/termination-log", dir} {
		_, err := prepare(&config{termLog: path})
		if err == nil || !strings.Contains(err.Error(), "--termination-log") {
			t.Errorf("prepare(termination log %s) = %v, want an error naming --termination-log", path, err)
		}
	}
	if _, err := prepare(&config{termLog: dir + "/termination-log"}); err != nil {
		t.Errorf("writable termination log: %v", err)
	}
	if _, err := prepare(&config{termLog: "none"}); err != nil {
		t.Errorf("none: %v", err)
	}
}
