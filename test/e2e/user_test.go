package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The passwd and group files the --user tests bind-mount over /etc in
// lfinit's namespace (unshare's mount namespace is private, the host's
// files are untouched).
const (
	testPasswd = "root:x:0:0:root:/root:/bin/sh\n# a comment\napp:x:1234:1234:test user:/home/app:/bin/false\nbroken:x\n"
	testGroup  = "root:x:0:\napp:x:1234:\nextra:x:2345:other,app\naudio:x:29:\n"
)

// withEtc is a wrapper for startLaunch that mounts testPasswd and
// testGroup over /etc/passwd and /etc/group, then execs lfinit through
// prefix (a command such as setpriv, or ""). It also lets any user run
// the helper.
func withEtc(t *testing.T, prefix string) []string {
	t.Helper()
	needRoot(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "passwd"), []byte(testPasswd), 0o644)
	os.WriteFile(filepath.Join(dir, "group"), []byte(testGroup), 0o644)
	// The build directory is 0700: the child, not root, must exec the helper.
	if err := os.Chmod(filepath.Dir(helperBin), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"sh", "-c", `mount --bind "$0/passwd" /etc/passwd && mount --bind "$0/group" /etc/group && exec ` + prefix + ` "$@"`, dir}
}

// identity is what `helper -identity` printed: "Uid" → "1234 1234 1234 1234".
func identity(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			m[k] = v
		} else if k, v, ok := strings.Cut(l, "="); ok && k == "HOME" {
			m[k] = v
		} else if k, ok := strings.CutSuffix(l, ":"); ok {
			m[k] = ""
		}
	}
	if _, ok := m["Uid"]; !ok {
		t.Fatalf("the helper printed no identity:\n%s", out)
	}
	return m
}

// wantIdentity checks the child's ids, groups and HOME, and that a
// non-root child holds no capability in any set.
func wantIdentity(t *testing.T, got map[string]string, uid, gid, groups, home string) {
	t.Helper()
	four := func(id string) string { return strings.Repeat(id+" ", 3) + id }
	if got["Uid"] != four(uid) || got["Gid"] != four(gid) || got["Groups"] != groups || got["HOME"] != home {
		t.Errorf("child runs as Uid %q Gid %q Groups %q HOME %q; want %s, %s, %q, %q", got["Uid"], got["Gid"], got["Groups"], got["HOME"], four(uid), four(gid), groups, home)
	}
	for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
		if uid != "0" && got[set] != "0000000000000000" {
			t.Errorf("a child of uid %s has %s %s, want none", uid, set, got[set])
		}
	}
}

// runUser runs lfinit as PID 1 under wrapper with args, the helper
// printing its identity as the child; it returns lfinit's exit code and
// the helper's output.
func runUser(t *testing.T, wrapper []string, env []string, args ...string) (int, string) {
	t.Helper()
	args = append(args, "--", "HELPER", "-identity", "-exit", "0")
	r := startLaunch(t, true, args, launch{env: env, wrapper: wrapper})
	return r.wait(10 * time.Second), r.stdout.String() + r.stderr.String()
}

// TestUserIdentity: the child's ids, groups, HOME and capabilities, as
// /proc/PID/status shows them, for each way of naming the user.
func TestUserIdentity(t *testing.T) {
	for _, c := range []struct {
		name, prefix                  string // prefix: what lfinit is exec'd through
		env, args                     []string
		uid, gid, groups, home, proof string // proof: a line of lfinit's log
	}{
		// From /etc/passwd and /etc/group; the /root an engine sets is replaced.
		{name: "name", env: []string{"HOME=/root"}, args: []string{"--user", "app"},
			uid: "1234", gid: "1234", groups: "1234 2345", home: "/home/app"},
		// UID:GID needs no entry; a HOME the operator chose is kept.
		{name: "uid-gid", env: []string{"HOME=/data", "LFINIT_USER=4321:4322"},
			uid: "4321", gid: "4322", groups: "4322", home: "/data"},
		// A uid alone without an entry: lfinit's gid (as docker run --user UID), HOME /.
		{name: "uid-without-entry", env: []string{"HOME=/root"}, args: []string{"--user", "4321"},
			uid: "4321", gid: "0", groups: "0", home: "/"},
		// lfinit started with inheritable and ambient capabilities: the
		// kernel's setuid clears the ambient set but keeps the inheritable
		// one, which lfinit clears itself.
		{name: "inherited-capabilities", prefix: "setpriv --inh-caps=+net_bind_service,+chown --ambient-caps=+net_bind_service",
			args: []string{"--user", "app:audio"}, uid: "1234", gid: "29", groups: "29", home: "/home/app"},
		// Socket activation: through the exec step, still as the user.
		{name: "exec-step", prefix: "env LISTEN_PID=$$ LISTEN_FDS=0", args: []string{"--user", "app"},
			uid: "1234", gid: "1234", groups: "1234 2345", home: "/home/app", proof: "socket activation: passing the sockets and LISTEN_PID on"},
		// Root keeps root's capabilities (wantIdentity checks none for 0).
		{name: "root", args: []string{"--user", "0:audio"}, uid: "0", gid: "29", groups: "29", home: "/root"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out := runUser(t, withEtc(t, c.prefix), c.env, c.args...)
			if code != 0 || !strings.Contains(out, c.proof) {
				t.Fatalf("exit %d, want 0 and %q in the output:\n%s", code, c.proof, out)
			}
			wantIdentity(t, identity(t, out), c.uid, c.gid, c.groups, c.home)
		})
	}
}

// TestUserRootKeepsCapabilities: --user 0 is root, with root's
// capabilities (what the uid implies); only the groups change.
func TestUserRootKeepsCapabilities(t *testing.T) {
	_, out := runUser(t, withEtc(t, ""), nil, "--user", "0:audio")
	if got := identity(t, out); got["CapEff"] == "0000000000000000" {
		t.Errorf("root's child lost its capabilities: CapEff %s", got["CapEff"])
	}
}

// TestUserErrors: an unknown user or group, a bad spec, or a non-root
// lfinit asked for another user is one line and exit 2, before the child
// starts.
func TestUserErrors(t *testing.T) {
	for _, c := range []struct {
		name, prelude, user, want string
	}{
		{"unknown user", "", "nosuch", `lfinit: --user nosuch: user "nosuch" is not in /etc/passwd`},
		{"malformed entry", "", "broken", `lfinit: --user broken: user "broken" is not in /etc/passwd`},
		{"unknown group", "", "app:nosuch", `lfinit: --user app:nosuch: group "nosuch" is not in /etc/group`},
		{"two colons", "", "app:app:app", `has more than one colon`},
		{"not root", "setpriv --reuid 1234 --regid 1234 --clear-groups", "4321", "lfinit runs as uid 1234 gid 1234 without CAP_SETUID and CAP_SETGID"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			if c.prelude != "" {
				// lfinit itself runs as the unprivileged user.
				os.Chmod(filepath.Dir(lfinitBin), 0o755)
			}
			code, out := runUser(t, withEtc(t, c.prelude), nil, "--user", c.user)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
				t.Errorf("exit %d, output:\n%s\nwant exit 2 and one line saying %q", code, out, c.want)
			}
		})
	}
}

// TestUserSameAsLfinit: a non-root lfinit may name its own uid and gid:
// nothing changes, the child runs.
func TestUserSameAsLfinit(t *testing.T) {
	os.Chmod(filepath.Dir(lfinitBin), 0o755)
	code, out := runUser(t, withEtc(t, "setpriv --reuid 1234 --regid 1234 --clear-groups"), []string{"HOME=/home/app"}, "--user", "1234:1234")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	wantIdentity(t, identity(t, out), "1234", "1234", "", "/home/app")
}

// TestHookRunsAsTheUser: the shutdown hook acts for the service, so with
// --user it runs as that user, with no capabilities, like the child.
func TestHookRunsAsTheUser(t *testing.T) {
	hook := `["HELPER","-identity","-exit","0"]`
	r := startLaunch(t, true, []string{"--user", "4321:4322", "--drain-delay=300ms", "--on-shutdown", hook,
		"--", "HELPER"}, launch{wrapper: withEtc(t, ""), env: []string{"HOME=/data"}})
	r.waitLog("phase=ready")
	r.signal(syscall.SIGTERM)
	if code := r.wait(10 * time.Second); code != 143 {
		t.Fatalf("exit %d, want the child's 143\n%s", code, r.stderr.String())
	}
	wantIdentity(t, identity(t, r.stdout.String()), "4321", "4322", "4322", "/data")
}
