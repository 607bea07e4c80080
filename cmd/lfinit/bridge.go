package main

import (
	"log/slog"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/notify"
	"github.com/light-fabric/lfinit/statusfile"
)

// bridge passes lfinit's readiness up to the notify socket lfinit itself
// was given (NOTIFY_SOCKET in its own environment), with --ready-notify:
// READY=1 once the child is ready by every gate, STOPPING=1 once it stops
// being served (a shutdown, the service's STOPPING=1), and a STATUS= line
// at each change (lfinit's phase and the service's own status). It is a status publisher: called from the loop at each
// transition, it never waits (notify.Sender.Send).
type bridge struct {
	to   *notify.Sender
	log  *slog.Logger
	last string // the last message sent, so a snapshot that changes nothing sends nothing
}

// newBridge is the bridge to addr, nil when there is none to make.
func newBridge(addr string, log *slog.Logger) *bridge {
	if addr == "" {
		return nil
	}
	s, err := notify.Dial(addr)
	if err != nil {
		log.Warn("cannot pass readiness up to NOTIFY_SOCKET", "addr", addr, "err", err)
		return nil
	}
	return &bridge{to: s, log: log}
}

// publish sends what s changed.
func (b *bridge) publish(s statusfile.Status) {
	msg := bridgeMessage(s)
	if msg == b.last {
		return
	}
	b.last = msg
	if err := b.to.Send(msg); err != nil {
		b.log.Debug("cannot pass readiness up to NOTIFY_SOCKET", "err", err)
	}
}

// bridgeMessage is the message that says s to lfinit's own systemd.
func bridgeMessage(s statusfile.Status) string {
	status := "STATUS=lfinit: " + string(s.Phase)
	if s.ServiceStatus != nil {
		status += ": " + *s.ServiceStatus
	}
	switch {
	case s.Ready:
		return "READY=1\n" + status
	case s.Phase == statusfile.Starting:
		return status
	case s.Phase == statusfile.Ready && s.ServiceState != nil && *s.ServiceState == core.ServiceReloading:
		// Not RELOADING=1: systemd 253 wants MONOTONIC_USEC with it, and
		// the host's unit is not reloading; the status line says it.
		return status + " (reloading)"
	}
	return "STOPPING=1\n" + status
}
