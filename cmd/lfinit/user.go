package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/light-fabric/lfinit/ident"
	"github.com/light-fabric/lfinit/spawn"
)

// childUser resolves --user against /etc/passwd and /etc/group: the
// credential the child is started with (nil: lfinit's own) and its
// environment, HOME made the user's. An error is a usage error.
func childUser(spec string, env []string) (*syscall.Credential, []string, error) {
	if spec == "" {
		return nil, env, nil
	}
	id, err := ident.Resolve(spec, ident.System, uint32(os.Getgid()))
	if err != nil {
		return nil, nil, fmt.Errorf("--user %s: %v", spec, err)
	}
	cred, err := spawn.Credential(id)
	if err != nil {
		return nil, nil, err
	}
	return cred, ident.WithHome(env, id, runtimeHomes()...), nil
}

// runtimeHomes are the HOME values a container engine sets for lfinit's
// own user rather than the operator: its passwd home, and / or /root
// without an entry (what Docker and podman set then).
func runtimeHomes() []string {
	own, err := ident.Resolve(strconv.Itoa(os.Getuid()), ident.System, 0)
	if err == nil && own.Name != "" {
		return []string{own.Home}
	}
	if os.Getuid() == 0 {
		return []string{"/", "/root"}
	}
	return []string{"/"}
}
