// Package ident resolves lfinit's --user USER[:GROUP] into the ids the
// child runs with, from /etc/passwd and /etc/group when they exist and from
// the numbers alone otherwise (a FROM scratch image has neither file). It
// parses the files itself: no cgo, no NSS, the same answer in every build.
package ident

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Identity is who the child runs as.
type Identity struct {
	Name   string   // the passwd name; "" for a uid without an entry
	UID    uint32   // the user id
	GID    uint32   // the primary group id
	Groups []uint32 // the supplementary groups, GID first
	Home   string   // the passwd home; "/" without an entry (as su-exec)
}

// Spec is --user split at its colon: User and Group as written (Group ""
// when none was given).
type Spec struct{ User, Group string }

// ParseSpec splits and checks the syntax of USER[:GROUP], without reading
// any file: a name or a number each, the number a valid id.
func ParseSpec(s string) (Spec, error) {
	user, group, hasGroup := strings.Cut(s, ":")
	switch {
	case user == "":
		return Spec{}, fmt.Errorf("%q names no user before the colon (USER[:GROUP], e.g. app or 1000:1000)", s)
	case hasGroup && group == "":
		return Spec{}, fmt.Errorf("%q names no group after the colon (USER[:GROUP], e.g. app:app or 1000:1000)", s)
	case strings.Contains(group, ":"):
		return Spec{}, fmt.Errorf("%q has more than one colon (USER[:GROUP])", s)
	}
	for _, part := range []string{user, group} {
		if isNumber(part) {
			if _, ok := parseID(part); !ok {
				return Spec{}, fmt.Errorf("%q is not a valid id (0 to 4294967294)", part)
			}
		}
	}
	return Spec{user, group}, nil
}

// Files are where the passwd and group databases are read from.
type Files struct{ Passwd, Group string }

// System are /etc/passwd and /etc/group.
var System = Files{"/etc/passwd", "/etc/group"}

// Under are the databases of the tree at root (tests use a directory).
func Under(root string) Files {
	return Files{filepath.Join(root, "etc/passwd"), filepath.Join(root, "etc/group")}
}

// Resolve turns s into an Identity, as su-exec and gosu do: a user name
// must be in the passwd file; a uid need not be, and without an entry its
// group is ownGID (lfinit's own, as `docker run --user UID` gives gid 0).
// Without GROUP the supplementary groups are the entry's gid and every
// group that lists the user; with GROUP they are that group alone.
func Resolve(s string, f Files, ownGID uint32) (Identity, error) {
	spec, err := ParseSpec(s)
	if err != nil {
		return Identity{}, err
	}
	users, err := readDB(f.Passwd)
	if err != nil {
		return Identity{}, err
	}
	id, err := resolveUser(spec.User, users, f.Passwd, ownGID)
	if err != nil {
		return Identity{}, err
	}
	groups, err := readDB(f.Group)
	if err != nil {
		return Identity{}, err
	}
	if spec.Group != "" {
		gid, err := resolveGroup(spec.Group, groups, f.Group)
		id.GID, id.Groups = gid, []uint32{gid}
		return id, err
	}
	id.Groups = memberships(id.Name, id.GID, groups)
	return id, nil
}

// resolveUser finds user (a name or a uid) in the passwd lines.
func resolveUser(user string, lines [][]string, path string, ownGID uint32) (Identity, error) {
	byID := isNumber(user)
	for _, l := range lines {
		e, ok := parsePasswd(l)
		if ok && (e.Name == user || byID && strconv.FormatUint(uint64(e.UID), 10) == user) {
			return e, nil
		}
	}
	if byID {
		uid, _ := parseID(user)
		return Identity{UID: uid, GID: ownGID, Home: "/"}, nil
	}
	if lines == nil {
		return Identity{}, fmt.Errorf("user %q: there is no %s to look it up in (give a numeric uid, e.g. 1000:1000)", user, path)
	}
	return Identity{}, fmt.Errorf("user %q is not in %s", user, path)
}

// resolveGroup finds group (a name or a gid) in the group lines; a gid
// needs no entry.
func resolveGroup(group string, lines [][]string, path string) (uint32, error) {
	if gid, ok := parseID(group); ok {
		return gid, nil
	}
	for _, l := range lines {
		if name, gid, _, ok := parseGroup(l); ok && name == group {
			return gid, nil
		}
	}
	if lines == nil {
		return 0, fmt.Errorf("group %q: there is no %s to look it up in (give a numeric gid)", group, path)
	}
	return 0, fmt.Errorf("group %q is not in %s", group, path)
}

// memberships is gid and the gid of every group that lists name as a
// member, once each, in file order (what getgrouplist(3) returns).
func memberships(name string, gid uint32, lines [][]string) []uint32 {
	out := []uint32{gid}
	if name == "" {
		return out
	}
	for _, l := range lines {
		_, g, members, ok := parseGroup(l)
		if !ok || !slices.Contains(members, name) || slices.Contains(out, g) {
			continue
		}
		out = append(out, g)
	}
	return out
}

// readDB reads a colon-separated database: nil for a file that does not
// exist; comments, blank lines and NIS "+"/"-" lines left out.
func readDB(path string) ([][]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, err)
	}
	lines := [][]string{}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' || l[0] == '+' || l[0] == '-' {
			continue
		}
		lines = append(lines, strings.Split(l, ":"))
	}
	return lines, nil
}

// parsePasswd reads name:password:uid:gid:gecos:home:shell; a line without
// a name or valid ids is not an entry (a missing home reads "/").
func parsePasswd(f []string) (Identity, bool) {
	if len(f) < 4 || f[0] == "" {
		return Identity{}, false
	}
	uid, ok1 := parseID(f[2])
	gid, ok2 := parseID(f[3])
	if !ok1 || !ok2 {
		return Identity{}, false
	}
	home := "/"
	if len(f) > 5 && f[5] != "" {
		home = f[5]
	}
	return Identity{Name: f[0], UID: uid, GID: gid, Home: home}, true
}

// parseGroup reads name:password:gid:member,member; a line without a name
// or a valid gid is not an entry.
func parseGroup(f []string) (name string, gid uint32, members []string, ok bool) {
	if len(f) < 3 || f[0] == "" {
		return "", 0, nil, false
	}
	if gid, ok = parseID(f[2]); !ok {
		return "", 0, nil, false
	}
	if len(f) > 3 {
		for _, m := range strings.Split(f[3], ",") {
			if m = strings.TrimSpace(m); m != "" {
				members = append(members, m)
			}
		}
	}
	return f[0], gid, members, true
}

// parseID reads a decimal id; 4294967295 is (uid_t)-1, "no change" to
// setresuid, so never an id.
func parseID(s string) (uint32, bool) {
	if !isNumber(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 1<<32-1 {
		return 0, false
	}
	return uint32(n), true
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
