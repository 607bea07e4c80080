package supervisor

import (
	"syscall"

	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/sender"
	"github.com/light-fabric/lfinit/statusfile"
)

// stopSender is who sent the first shutdown signal (sender.Of), and the
// command of a sender lfinit can see, read when the signal came: a kill
// that sends and exits is gone soon after.
type stopSender struct {
	known   bool
	who     sender.Sender
	command string
}

// record reads who sent sig, the first shutdown signal; call it after the
// signal's forward, which must not wait for the read of /proc.
func (s *stopSender) record(sig syscall.Signal) {
	s.known, s.who = true, sender.Of(sig)
	if s.who.Kind != sender.Process {
		return
	}
	if p, ok := reaper.Read(s.who.Pid); ok {
		s.command = p.Comm
	}
}

// attrs are the log fields of the sender.
func (s *stopSender) attrs() []any {
	if !s.known {
		return nil
	}
	attrs := []any{"signal_sender", string(s.who.Kind)}
	switch s.who.Kind {
	case sender.Process:
		attrs = append(attrs, "signal_sender_pid", s.who.Pid, "signal_sender_uid", s.who.Uid)
		if s.command != "" {
			attrs = append(attrs, "signal_sender_command", s.command)
		}
	case sender.Outside:
		attrs = append(attrs, "signal_sender_uid", s.who.Uid)
	}
	return attrs
}

// publish sets the sender's keys of st.
func (s *stopSender) publish(st *statusfile.Status) {
	if !s.known {
		return
	}
	kind := string(s.who.Kind)
	st.SignalSender = &kind
	switch s.who.Kind {
	case sender.Process:
		pid, uid := s.who.Pid, s.who.Uid
		st.SignalSenderPid, st.SignalSenderUid = &pid, &uid
		if s.command != "" {
			command := s.command
			st.SignalSenderCommand = &command
		}
	case sender.Outside:
		uid := s.who.Uid
		st.SignalSenderUid = &uid
	}
}
