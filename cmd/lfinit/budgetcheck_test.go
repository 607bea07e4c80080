package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/budget"
)

// Every problem of a budget is refused by a run and by `lfinit budget`
// with the same message, which names the option to change.
func TestOneBudgetCheckOneMessage(t *testing.T) {
	for _, tc := range []struct {
		args string
		msg  string
		code int // of lfinit budget
	}{
		{"--grace 5s --drain-delay 5s", "--drain-delay 5s is not shorter than the grace (--grace 5s)", 2},
		{"--on-shutdown-timeout 1s", "--on-shutdown-timeout is set but --on-shutdown is not", 2},
		{"--on-shutdown /hook", "--on-shutdown needs a time to run: set --on-shutdown-timeout", 2},
		{"--grace 2s --on-shutdown /hook --on-shutdown-timeout 2s", "--on-shutdown-timeout 2s must be shorter than --grace 2s", 2},
		{"--stop-timeout 8s", "grace 8s + floor 250ms + allowance 1s = 9.25s does not fit --stop-timeout 8s (TOO SHORT by 1.25s): the orchestrator would SIGKILL lfinit (exit 137) before its own deadline; set terminationGracePeriodSeconds: 10, or lower --grace", 1},
		{"--stop-timeout 10s --push-gateway http://pgw", "grace 8s + floor 250ms + push 1s + allowance 1s = 10.25s does not fit --stop-timeout 10s (TOO SHORT by 250ms)", 1},
	} {
		_, err := parseArgs(append(strings.Fields(tc.args), "app"), noEnv)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.msg, tc.msg) {
			t.Errorf("run %s: %v, want a usage error saying %q", tc.args, err, tc.msg)
		}
		var out, errOut strings.Builder
		code := runSubcommand("budget", strings.Fields(tc.args), noEnv, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.msg) {
			t.Errorf("budget %s: exit %d, want %d saying %q:\n%s%s", tc.args, code, tc.code, tc.msg, out.String(), errOut.String())
		}
	}
	for _, args := range []string{"", "--stop-timeout 10s", "--grace 20s --drain-delay 5s --on-shutdown /hook --stop-timeout 22s"} {
		if _, err := parseArgs(append(strings.Fields(args), "app"), noEnv); err != nil {
			t.Errorf("run %s: %v", args, err)
		}
		var out, errOut strings.Builder
		if code := runSubcommand("budget", strings.Fields(args), noEnv, &out, &errOut); code != 0 {
			t.Errorf("budget %s: exit %d\n%s%s", args, code, out.String(), errOut.String())
		}
	}
}

// The printed timeline is budget.Start's schedule, line for line.
func TestTimelineIsBudgetStart(t *testing.T) {
	for _, tc := range []struct {
		b    budget.Config
		want string
	}{
		{budget.Default(), `shutdown timeline (t0 = the first shutdown signal):
  t0             readiness drops (/readyz 503); the child is untouched while it quiesces
  t0+0s          stop signal forwarded; the drain begins
  t0+8s          grace deadline: deadline signal; the child is late (exit 1 from here)
  t0+8.25s       hard deadline: SIGKILL to the whole tree, lfinit exits 1
`},
		{budget.Config{Grace: 20 * time.Second, Floor: time.Second, DrainDelay: 2 * time.Second, Hook: 5 * time.Second, Push: 3 * time.Second}, `shutdown timeline (t0 = the first shutdown signal):
  t0             readiness drops (/readyz 503); the child is untouched while it quiesces
  t0             shutdown hook starts (--on-shutdown)
  t0+5s          at the latest: shutdown hook killed (--on-shutdown-timeout 5s)
  t0+5s          at the latest: stop signal forwarded (when the hook ends, not before t0+2s); the drain begins
  t0+20s         grace deadline: deadline signal; the child is late (exit 1 from here)
  t0+21s         hard deadline: SIGKILL to the whole tree, lfinit exits 1
  t0+24s         at the latest: the final metrics pushed (--push-timeout 3s), lfinit gone
`},
		{budget.Config{Grace: 10 * time.Second, Floor: 0, DrainDelay: 7 * time.Second, Hook: 3 * time.Second}, `shutdown timeline (t0 = the first shutdown signal):
  t0             readiness drops (/readyz 503); the child is untouched while it quiesces
  t0             shutdown hook starts (--on-shutdown)
  t0+3s          at the latest: shutdown hook killed (--on-shutdown-timeout 3s)
  t0+7s          at the latest: stop signal forwarded (when the hook ends, not before t0+7s); the drain begins
  t0+10s         grace deadline: deadline signal; the child is late (exit 1 from here)
  t0+10s         hard deadline: SIGKILL to the whole tree, lfinit exits 1
`},
	} {
		if got := timeline(tc.b); got != tc.want {
			t.Errorf("timeline(%+v):\n%s\nwant:\n%s", tc.b, got, tc.want)
		}
	}
}
