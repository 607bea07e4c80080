package main

import (
	"testing"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/statusfile"
)

func TestBridgeMessage(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		s    statusfile.Status
		want string
	}{
		{statusfile.Status{Phase: statusfile.Starting}, "STATUS=lfinit: starting"},
		{statusfile.Status{Phase: statusfile.Ready, Ready: true, ServiceStatus: str("3 workers")}, "READY=1\nSTATUS=lfinit: ready: 3 workers"},
		{statusfile.Status{Phase: statusfile.Ready, ServiceState: str(core.ServiceReloading)}, "STATUS=lfinit: ready (reloading)"},
		{statusfile.Status{Phase: statusfile.Ready, ServiceState: str(core.ServiceStopping)}, "STOPPING=1\nSTATUS=lfinit: ready"},
		{statusfile.Status{Phase: statusfile.Draining}, "STOPPING=1\nSTATUS=lfinit: draining"},
		{statusfile.Status{Phase: statusfile.AbortingStartup}, "STOPPING=1\nSTATUS=lfinit: aborting-startup"},
	} {
		if got := bridgeMessage(c.s); got != c.want {
			t.Errorf("%s: %q, want %q", c.s.Phase, got, c.want)
		}
	}
}
