package main

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/light-fabric/lfinit/notify"
)

// checkReadyNotify checks --ready-notify: abstract, or a directory that
// will hold the socket.
var checkReadyNotify = orOff(func(v string) error {
	if v == notify.Abstract || filepath.IsAbs(v) || strings.HasPrefix(v, ".") {
		return nil
	}
	return errors.New("want abstract (a socket without a file) or the path of a directory for the socket, e.g. /run/lfinit")
})

// notifyVar is the variable that names the notify socket.
const notifyVar = "NOTIFY_SOCKET="

// withNotifySocket is env with NOTIFY_SOCKET naming lfinit's socket, when
// it serves one: lfinit's own parent's socket is never passed on (lfinit
// passes the readiness up itself); with a watchdog, WATCHDOG_USEC and
// WATCHDOG_PID (made the child's own pid as it starts) too.
func withNotifySocket(env []string, l *notify.Listener, watchdog time.Duration) []string {
	if l == nil {
		return env
	}
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		if !strings.HasPrefix(kv, notifyVar) && !strings.HasPrefix(kv, "WATCHDOG_USEC=") && !strings.HasPrefix(kv, "WATCHDOG_PID=") {
			out = append(out, kv)
		}
	}
	out = append(out, notifyVar+l.Addr())
	if watchdog > 0 {
		out = append(out, "WATCHDOG_USEC="+strconv.FormatInt(watchdog.Microseconds(), 10), "WATCHDOG_PID=0")
	}
	return out
}
