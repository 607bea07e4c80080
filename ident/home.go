package ident

import "strings"

// WithHome is env with HOME set to id's home when HOME is unset or is
// one of runtimeHomes: the home a container engine sets for lfinit's own
// user (Docker and podman set HOME for the container's user, /root for
// root), which is not the operator's choice and not the child's home.
func WithHome(env []string, id Identity, runtimeHomes ...string) []string {
	home, set := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok && !set {
			home, set = v, true
		}
	}
	if set && !inherited(home, runtimeHomes) {
		return env
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+id.Home)
}

func inherited(home string, runtimeHomes []string) bool {
	for _, h := range runtimeHomes {
		if home == h {
			return true
		}
	}
	return false
}
