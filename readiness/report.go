package readiness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// The "still starting" reminders: the first after FirstReminder, then one
// every Reminder, so that a child that never answers is seen in the log at
// the default level without a line for every attempt.
const (
	FirstReminder = 5 * time.Second
	Reminder      = 30 * time.Second
)

// Report is why a check has not passed yet.
type Report struct {
	Err    string        // why the last attempt failed ("127.0.0.1:8080 refuses connections"); "" once it passed
	Waited time.Duration // since the check started
	Remind bool          // a reminder is due: time to say "still starting"
}

// reminder decides which attempts are reported: a new reason at once, the
// same one when a reminder is due, a pass after a failure once.
type reminder struct {
	start, due time.Time
	last       string
}

func newReminder(start time.Time) *reminder {
	return &reminder{start: start, due: start.Add(FirstReminder)}
}

// next is the report to send for an attempt that failed for why ("" when
// it passed) at now, if one is due.
func (m *reminder) next(why string, now time.Time) (Report, bool) {
	rep := Report{Err: why, Waited: now.Sub(m.start)}
	if why != "" && !now.Before(m.due) {
		rep.Remind = true
		for !now.Before(m.due) {
			m.due = m.due.Add(Reminder)
		}
	}
	changed := why != m.last
	m.last = why
	return rep, changed || rep.Remind
}

// statusError is an HTTP answer outside 2xx and 3xx.
type statusError int

func (e statusError) Error() string {
	return fmt.Sprintf("answers %d %s", int(e), http.StatusText(int(e)))
}

// describe says why an attempt failed in an operator's words, naming the
// address it tried.
func (r *Check) describe(err error, timeout time.Duration) string {
	target := r.TCP
	if r.HTTP != "" {
		target = r.HTTP
		if u, perr := url.Parse(r.HTTP); perr == nil {
			target = u.Host
		}
	}
	var status statusError
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &status):
		return r.HTTP + " " + status.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return target + " refuses connections"
	case errors.As(err, &dns):
		return fmt.Sprintf("cannot resolve %s: %s", dns.Name, dns.Err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("%s does not answer within %v", target, timeout)
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return target + " is unreachable"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text repeats the method and the URL
	}
	return target + ": " + err.Error()
}
