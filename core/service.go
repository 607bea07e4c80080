package core

// Service is what the service said of itself over the systemd notify
// protocol (--ready-notify), reduced to what lfinit acts on: whether
// READY=1 opened the readiness gate, and whether the service has since
// declared itself unready (STOPPING=1, RELOADING=1). It is pure: the loop
// feeds it each message's lines and publishes what it says.
type Service struct {
	gated     bool // READY=1 is needed before the child is ready
	said      bool // READY=1 since the start, or since the last RELOADING=1
	stopping  bool // STOPPING=1: for good, the service is going away
	reloading bool // RELOADING=1 and no READY=1 since
}

// NewService is the service's word before it said anything; gated says
// that READY=1 is needed (--ready-notify).
func NewService(gated bool) Service { return Service{gated: gated} }

// Heard applies one message's readiness lines, in the order systemd
// reads them: RELOADING=1 takes the readiness back, READY=1 in the same
// message gives it again (a reload that finished at once), and STOPPING=1
// wins over both and for good. It reports whether State changed.
func (s *Service) Heard(ready, reloading, stopping bool) bool {
	before := s.State()
	if reloading {
		s.reloading, s.said = true, false
	}
	if ready {
		s.reloading, s.said = false, true
	}
	s.stopping = s.stopping || stopping
	return s.State() != before
}

// GateOpen reports whether the service lets the child be ready: without
// the gate always, with it once READY=1 came (and no RELOADING=1 since).
func (s Service) GateOpen() bool { return !s.gated || s.said && !s.stopping }

// Unready reports whether the service has taken back its readiness: a
// child that is ready by every check is published as not ready.
func (s Service) Unready() bool { return s.stopping || s.reloading }

// The states a service says it is in.
const (
	ServiceStarting  = "starting"  // nothing said yet
	ServiceReady     = "ready"     // READY=1
	ServiceReloading = "reloading" // RELOADING=1, no READY=1 since
	ServiceStopping  = "stopping"  // STOPPING=1
)

// State is the state the service last declared, for the status file.
func (s Service) State() string {
	switch {
	case s.stopping:
		return ServiceStopping
	case s.reloading:
		return ServiceReloading
	case s.said:
		return ServiceReady
	}
	return ServiceStarting
}
