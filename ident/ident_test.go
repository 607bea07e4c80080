package ident

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const passwd = `# a comment, then a blank line

root:x:0:0:root:/root:/bin/sh
app:x:1000:1000:App,,,:/home/app:/bin/sh
  spaced:x:1001:1001::/srv/spaced:/bin/false  
nohome:x:1002:1002
short:x:1003
badid:x:abc:1000::/x:/bin/sh
neg:x:-1:0::/x:/bin/sh
huge:x:4294967295:0::/x:/bin/sh
:x:1004:1004::/nameless:/bin/sh
+nis
-nis
app:x:2000:2000::/second/app:/bin/sh
`

const group = `# groups
root:x:0:
app:x:1000:
staff:x:50:app, other
wheel:x:10:other,app
dup:x:50:app
badgid:x:zz:app
nomembers:x:60
short:x
audio:x:29:
`

// files writes the databases (nil for one left out) into a temp root.
func files(t *testing.T, pw, gr *string) Files {
	t.Helper()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "etc"), 0o755)
	f := Under(root)
	if pw != nil {
		os.WriteFile(f.Passwd, []byte(*pw), 0o644)
	}
	if gr != nil {
		os.WriteFile(f.Group, []byte(*gr), 0o644)
	}
	return f
}

func str(s string) *string { return &s }

func TestResolve(t *testing.T) {
	f := files(t, str(passwd), str(group))
	for _, c := range []struct {
		spec string
		want Identity
	}{
		{"app", Identity{"app", 1000, 1000, []uint32{1000, 50, 10}, "/home/app"}},
		{"1000", Identity{"app", 1000, 1000, []uint32{1000, 50, 10}, "/home/app"}},
		{"app:audio", Identity{"app", 1000, 29, []uint32{29}, "/home/app"}},
		{"app:777", Identity{"app", 1000, 777, []uint32{777}, "/home/app"}},
		{"1000:1000", Identity{"app", 1000, 1000, []uint32{1000}, "/home/app"}},
		{"spaced", Identity{"spaced", 1001, 1001, []uint32{1001}, "/srv/spaced"}},
		{"nohome", Identity{"nohome", 1002, 1002, []uint32{1002}, "/"}},
		// A uid without an entry: lfinit's own gid, home /.
		{"4242", Identity{"", 4242, 7, []uint32{7}, "/"}},
		{"4242:4242", Identity{"", 4242, 4242, []uint32{4242}, "/"}},
		{"0", Identity{"root", 0, 0, []uint32{0}, "/root"}},
	} {
		got, err := Resolve(c.spec, f, 7)
		if err != nil {
			t.Errorf("Resolve(%q): %v", c.spec, err)
			continue
		}
		if got.Name != c.want.Name || got.UID != c.want.UID || got.GID != c.want.GID || !slices.Equal(got.Groups, c.want.Groups) || got.Home != c.want.Home {
			t.Errorf("Resolve(%q) = %+v, want %+v", c.spec, got, c.want)
		}
	}
}

// TestMalformedLinesAreNoEntries: a line with too few fields or a bad id
// is skipped, never read as a user; the first good entry of a name wins.
func TestMalformedLinesAreNoEntries(t *testing.T) {
	f := files(t, str(passwd), str(group))
	for _, name := range []string{"short", "badid", "neg", "huge", "+nis", "nis", "badgid"} {
		if id, err := Resolve(name, f, 0); err == nil {
			t.Errorf("Resolve(%q) = %+v, want an error", name, id)
		}
	}
	for _, g := range []string{"app:badgid", "app:short", "app:nosuch"} {
		if _, err := Resolve(g, f, 0); err == nil || !strings.Contains(err.Error(), "is not in "+f.Group) {
			t.Errorf("Resolve(%q): %v, want not in the group file", g, err)
		}
	}
	if id, _ := Resolve("app", f, 0); id.Home != "/home/app" {
		t.Errorf("the first app entry should win, got home %q", id.Home)
	}
	if id, err := Resolve("app:nomembers", f, 0); err != nil || id.GID != 60 {
		t.Errorf("a group line without a member list: %+v, %v", id, err)
	}
}

func TestWithoutFiles(t *testing.T) {
	f := files(t, nil, nil)
	id, err := Resolve("1000:1000", f, 0)
	if err != nil || id.UID != 1000 || id.GID != 1000 || !slices.Equal(id.Groups, []uint32{1000}) || id.Home != "/" {
		t.Errorf("numeric without files: %+v, %v", id, err)
	}
	if id, err := Resolve("1000", f, 0); err != nil || id.GID != 0 {
		t.Errorf("numeric uid alone without files: %+v, %v, want gid 0 (lfinit's)", id, err)
	}
	for spec, want := range map[string]string{
		"app":      "user \"app\": there is no " + f.Passwd,
		"1000:app": "group \"app\": there is no " + f.Group,
	} {
		if _, err := Resolve(spec, f, 0); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Resolve(%q): %v, want %q…", spec, err, want)
		}
	}
	// No group file: a named user's groups are its gid alone.
	f = files(t, str(passwd), nil)
	if id, err := Resolve("app", f, 0); err != nil || !slices.Equal(id.Groups, []uint32{1000}) {
		t.Errorf("no group file: %+v, %v", id, err)
	}
}

func TestUnreadableFileIsAnError(t *testing.T) {
	f := files(t, nil, nil)
	os.Mkdir(f.Passwd, 0o755) // reading a directory fails
	if _, err := Resolve("1000", f, 0); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("unreadable passwd: %v", err)
	}
}

func TestParseSpec(t *testing.T) {
	for _, ok := range []string{"app", "1000", "app:app", "0:0", "4294967294", "a-b_c.d"} {
		if _, err := ParseSpec(ok); err != nil {
			t.Errorf("ParseSpec(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{":app", "app:", "a:b:c", "4294967295", "99999999999", "1:4294967295", ":"} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) should fail", bad)
		}
	}
}

func TestWithHome(t *testing.T) {
	id := Identity{Home: "/home/app"}
	for _, c := range []struct{ env, want []string }{
		{[]string{"PATH=/bin"}, []string{"PATH=/bin", "HOME=/home/app"}},
		{[]string{"HOME=/root", "PATH=/bin"}, []string{"PATH=/bin", "HOME=/home/app"}},
		{[]string{"HOME=/data"}, []string{"HOME=/data"}},
		{[]string{"HOME=/", "HOME=/data"}, []string{"HOME=/home/app"}},
	} {
		if got := WithHome(c.env, id, "/root", "/"); !slices.Equal(got, c.want) {
			t.Errorf("WithHome(%q) = %q, want %q", c.env, got, c.want)
		}
	}
}
