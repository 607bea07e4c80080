package container

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// usersImage is baseImage with a small /etc/passwd and /etc/group.
const usersImage = "localhost/lfinit-users:test"

var (
	usersOnce sync.Once
	usersErr  error
)

// needUsersImage builds usersImage once.
func needUsersImage(t *testing.T) {
	t.Helper()
	needPodman(t)
	usersOnce.Do(func() {
		dir := filepath.Join(binDir, "..", "users")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "passwd"), []byte("root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:app:/home/app:/bin/false\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "group"), []byte("root:x:0:\napp:x:1000:\nextra:x:3000:app\n"), 0o644)
		usersErr = buildImage(dir, usersImage, "FROM "+baseImage+"\nCOPY passwd group /etc/\n", nil)
	})
	if usersErr != nil {
		t.Fatal(usersErr)
	}
}

// runToEnd runs image with podman options opts and lfinit arguments args,
// waits for it to exit, and returns its exit code and output.
func runToEnd(t *testing.T, image string, opts []string, args ...string) (string, string) {
	t.Helper()
	c := run(t, image, opts, args...)
	code := strings.TrimSpace(podman(t, "wait", c.name))
	var out string
	waitFor(t, 15*time.Second, "the container's logs", func() bool {
		out, _ = podmanCmd(30*time.Second, "logs", c.name)
		return out != ""
	})
	return code, out
}

// wantLines fails t unless out has every line of want.
func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || strings.TrimSpace(l) == w
		}
		if !found {
			t.Errorf("no line %q in the output:\n%s", w, out)
		}
	}
}

// noCaps are the lines of a process that holds no capability.
var noCaps = []string{"CapInh: 0000000000000000", "CapPrm: 0000000000000000", "CapEff: 0000000000000000", "CapAmb: 0000000000000000"}

// userCase is one run of an image with --user: lfinit's arguments, the
// exit code and the lines (or, for an error, the text) expected.
type userCase struct {
	name  string
	opts  []string // podman run's options
	args  []string
	code  string
	lines []string // every one must be a line of the output
	text  string   // must be in the output
}

// check runs c in its own subtest (its own container name).
func (c userCase) check(t *testing.T, image string) {
	t.Run(c.name, func(t *testing.T) {
		code, out := runToEnd(t, image, c.opts, c.args...)
		if code != c.code || !strings.Contains(out, c.text) {
			t.Errorf("exit %s, want %s and %q in the output:\n%s", code, c.code, c.text, out)
		}
		wantLines(t, out, c.lines...)
	})
}

// identityOf are lfinit's arguments to run the helper as spec and print
// its identity.
func identityOf(spec string) []string {
	return []string{"--user", spec, "--", "/helper", "-identity", "-exit", "0"}
}

// TestUserInScratchImage: FROM scratch, without /etc/passwd, UID:GID and
// a uid alone work (the uid alone gets lfinit's gid 0 and HOME /), and a
// name is refused with exit 2.
func TestUserInScratchImage(t *testing.T) {
	needPodman(t)
	for _, c := range []userCase{
		{name: "uid-gid", args: identityOf("1000:1000"), code: "0",
			lines: append([]string{"Uid: 1000 1000 1000 1000", "Gid: 1000 1000 1000 1000", "Groups: 1000", "HOME=/"}, noCaps...)},
		{name: "uid", args: identityOf("1000"), code: "0",
			lines: append([]string{"Uid: 1000 1000 1000 1000", "Gid: 0 0 0 0", "Groups: 0", "HOME=/"}, noCaps...)},
		{name: "name", args: identityOf("app"), code: "2", text: `user "app": there is no /etc/passwd to look it up in`},
	} {
		c.check(t, baseImage)
	}
}

// TestUserFromImagePasswd: a name takes its ids, groups and home from the
// image's /etc/passwd and /etc/group, replacing the HOME podman set for
// root; an unknown user or group is exit 2, and so is a non-root lfinit
// (podman --user) asked for another user.
func TestUserFromImagePasswd(t *testing.T) {
	needUsersImage(t)
	for _, c := range []userCase{
		{name: "name", args: identityOf("app"), code: "0",
			lines: append([]string{"Uid: 1000 1000 1000 1000", "Gid: 1000 1000 1000 1000", "Groups: 1000 3000", "HOME=/home/app"}, noCaps...)},
		{name: "unknown-user", args: identityOf("nosuch"), code: "2", text: `user "nosuch" is not in /etc/passwd`},
		{name: "unknown-group", args: identityOf("app:nosuch"), code: "2", text: `group "nosuch" is not in /etc/group`},
		{name: "not-root", opts: []string{"--user", "1000"}, args: identityOf("root"), code: "2",
			text: "lfinit runs as uid 1000 gid 1000 without CAP_SETUID and CAP_SETGID"},
	} {
		c.check(t, usersImage)
	}
}
