package main

import (
	"errors"
	"path/filepath"
	"strings"

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
// passes the readiness up itself).
func withNotifySocket(env []string, l *notify.Listener) []string {
	if l == nil {
		return env
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, notifyVar) {
			out = append(out, kv)
		}
	}
	return append(out, notifyVar+l.Addr())
}
