package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/light-fabric/lfinit/budget"
)

// tooShort is a shutdown budget that does not fit --stop-timeout: a run
// refuses to start with it, `lfinit budget` reports it and exits 1.
// It is a usage error to a run.
type tooShort struct{ *usageError }

func (e *tooShort) Unwrap() error { return e.usageError }

// checkBudget is the one check of the shutdown budget, shared by a run and
// `lfinit budget`: it fixes the hook's timeout and the push into
// c.opts.Budget, then refuses a timeline that makes no sense (a usage
// error) or that does not fit --stop-timeout (a *tooShort), one message
// per problem.
func (c *config) checkBudget() error {
	if err := c.checkHook(); err != nil {
		return err
	}
	b := &c.opts.Budget
	b.Push = 0
	if c.push.Gateway != "" { // a push of the final metrics counts only when one is configured
		b.Push = c.push.Timeout
	}
	if err := b.Validate(); err != nil {
		if errors.Is(err, budget.ErrDrainNotShorter) {
			return usagef("--drain-delay %v is not shorter than the grace (--grace %v): the child needs time after its stop signal; set --drain-delay below --grace", b.DrainDelay, b.Grace)
		}
		return usagef("%v", err)
	}
	return fitsStopTimeout(*b, c.stopTimeout, c.allowance)
}

// fitsStopTimeout is nil when stop is 0 (none) or leaves room for b and
// the allowance.
func fitsStopTimeout(b budget.Config, stop, allowance time.Duration) error {
	if stop == 0 || b.Fits(stop, allowance) {
		return nil
	}
	return &tooShort{&usageError{fmt.Sprintf("%s = %v does not fit --stop-timeout %v (TOO SHORT by %v): the orchestrator would SIGKILL lfinit (exit 137) before its own deadline; set terminationGracePeriodSeconds: %d, or lower --grace",
		b.Breakdown(allowance), b.Needed(allowance), stop, b.Needed(allowance)-stop, b.RecommendedSeconds(allowance))}}
}
