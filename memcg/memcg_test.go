package memcg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRoot builds a fake cgroupfs under a temporary directory: files maps
// a path below the root to its content. It returns the root and the path
// of a fake /proc/self/cgroup holding procSelf.
func fakeRoot(t *testing.T, procSelf string, files map[string]string) (root, cgroupFile string) {
	t.Helper()
	dir := t.TempDir()
	root = filepath.Join(dir, "sys-fs-cgroup")
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cgroupFile = filepath.Join(dir, "proc-self-cgroup")
	if err := os.WriteFile(cgroupFile, []byte(procSelf), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, cgroupFile
}

// find is FindIn on a fake tree, failing the test on an error.
func find(t *testing.T, procSelf string, files map[string]string) (Group, string) {
	t.Helper()
	root, cgroupFile := fakeRoot(t, procSelf, files)
	g, err := FindIn(cgroupFile, root)
	if err != nil {
		t.Fatalf("FindIn: %v", err)
	}
	return g, root
}

const v2Events = "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n"

func TestV2(t *testing.T) {
	g, root := find(t, "0::/kubepods/pod1/c1\n", map[string]string{
		"cgroup.controllers":                   "cpu memory pids\n",
		"kubepods/pod1/c1/memory.events":       v2Events,
		"kubepods/pod1/c1/memory.events.local": "oom_kill 0\n", // the cgroup's own kills only
		"kubepods/pod1/c1/memory.max":          "268435456\n",
		"kubepods/pod1/c1/memory.peak":         "267386880\n",
		"kubepods/pod1/memory.max":             "max\n", // the parent's, not read
	})
	if g.Version() != 2 || g.Dir() != filepath.Join(root, "kubepods/pod1/c1") {
		t.Fatalf("group = %v", g)
	}
	// memory.events, the subtree's count, not memory.events.local.
	want := Reading{OOMKills: 2, HasOOM: true, Limit: 256 << 20, HasLimit: true, Peak: 255 << 20, HasPeak: true}
	if got := g.Read(); got != want {
		t.Errorf("Read = %+v, want %+v", got, want)
	}
}

// Before Linux 5.19 there is no memory.peak; "max" is no limit.
func TestV2NoPeakUnlimited(t *testing.T) {
	g, _ := find(t, "0::/app\n", map[string]string{
		"cgroup.controllers": "memory\n",
		"app/memory.events":  v2Events,
		"app/memory.max":     "max\n",
	})
	want := Reading{OOMKills: 2, HasOOM: true, HasLimit: true, Unlimited: true}
	if got := g.Read(); got != want {
		t.Errorf("Read = %+v, want %+v", got, want)
	}
}

const v1Lines = "12:pids:/docker/abc\n5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n"

func TestV1(t *testing.T) {
	g, root := find(t, v1Lines, map[string]string{
		"memory/docker/abc/memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
		"memory/docker/abc/memory.limit_in_bytes":     "67108864\n",
		"memory/docker/abc/memory.max_usage_in_bytes": "67104768\n",
		"memory/memory.oom_control":                   "oom_kill_disable 0\nunder_oom 0\noom_kill 7\n",
	})
	if g.Version() != 1 || g.Dir() != filepath.Join(root, "memory/docker/abc") {
		t.Fatalf("group = %v", g)
	}
	want := Reading{OOMKills: 1, HasOOM: true, Limit: 64 << 20, HasLimit: true, Peak: 67104768, HasPeak: true}
	if got := g.Read(); got != want {
		t.Errorf("Read = %+v, want %+v", got, want)
	}
}

// Before Linux 4.13 memory.oom_control has no oom_kill: unknown, not 0. No
// limit reads as the largest int64 rounded down to the page size.
func TestV1NoCounterUnlimited(t *testing.T) {
	for _, limit := range []string{"9223372036854771712", "9223372036854710272", "9223372036854775807"} {
		g, _ := find(t, "3:memory:/\n", map[string]string{
			"memory/memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\n",
			"memory/memory.limit_in_bytes":     limit + "\n",
			"memory/memory.max_usage_in_bytes": "4096\n",
		})
		want := Reading{HasLimit: true, Unlimited: true, Peak: 4096, HasPeak: true}
		if got := g.Read(); got != want {
			t.Errorf("limit %s: Read = %+v, want %+v", limit, got, want)
		}
	}
}

// In a podman container /proc/self/cgroup names the host's path, which is
// not there: the container's own cgroup is mounted at the root.
func TestPathMissingIsRoot(t *testing.T) {
	g, root := find(t, "7:memory:/machine.slice/libpod-1234.scope\n", map[string]string{
		"memory/memory.oom_control":    "oom_kill 4\n",
		"memory/memory.limit_in_bytes": "268435456\n",
	})
	if g.Version() != 1 || g.Dir() != filepath.Join(root, "memory") {
		t.Fatalf("v1 group = %v", g)
	}
	if r := g.Read(); !r.HasOOM || r.OOMKills != 4 || r.Limit != 256<<20 || r.HasPeak {
		t.Errorf("v1 Read = %+v", r)
	}

	g, root = find(t, "0::/machine.slice/libpod-1234.scope/container\n", map[string]string{
		"cgroup.controllers": "memory\n",
		"memory.events":      "oom_kill 5\n",
	})
	if g.Version() != 2 || g.Dir() != root {
		t.Fatalf("v2 group = %v", g)
	}
	if r := g.Read(); !r.HasOOM || r.OOMKills != 5 || r.HasLimit {
		t.Errorf("v2 Read = %+v", r)
	}
}

// The hybrid layout: v1 controllers, and a v2 mount at unified/ without a
// memory controller. A v1 memory line means v1; without one, the v2 mount
// at unified/ is the place.
func TestHybrid(t *testing.T) {
	files := map[string]string{
		"unified/cgroup.controllers":                  "\n",
		"unified/user.slice/memory.events":            "oom_kill 9\n",
		"memory/user.slice/memory.oom_control":        "oom_kill 1\n",
		"memory/user.slice/memory.limit_in_bytes":     "1048576\n",
		"memory/user.slice/memory.max_usage_in_bytes": "2048\n",
	}
	g, root := find(t, "4:memory:/user.slice\n1:name=systemd:/user.slice\n0::/user.slice\n", files)
	if g.Version() != 1 || g.Dir() != filepath.Join(root, "memory/user.slice") {
		t.Fatalf("group = %v", g)
	}
	if r := g.Read(); r.OOMKills != 1 {
		t.Errorf("Read = %+v, want the v1 counter", r)
	}

	g, root = find(t, "1:name=systemd:/user.slice\n0::/user.slice\n", files)
	if g.Version() != 2 || g.Dir() != filepath.Join(root, "unified/user.slice") {
		t.Fatalf("without a memory line: group = %v", g)
	}
}

// The memory controller co-mounted with another shares its line.
func TestV1CoMounted(t *testing.T) {
	g, root := find(t, "4:cpu,memory:/svc\n", map[string]string{
		"memory/svc/memory.oom_control": "oom_kill 3\n",
	})
	if g.Version() != 1 || g.Dir() != filepath.Join(root, "memory/svc") {
		t.Fatalf("group = %v", g)
	}
}

func TestFindErrors(t *testing.T) {
	v2 := map[string]string{"cgroup.controllers": "memory\n", "memory.events": "oom_kill 0\n"}
	v1 := map[string]string{"memory/memory.oom_control": "oom_kill 0\n"}
	for _, c := range []struct {
		name, procSelf string
		files          map[string]string
	}{
		{"no memory or v2 line", "1:cpu:/\n2:name=systemd:/\n", v2},
		{"empty file", "", v2},
		{"malformed line", "garbage\n0::/\n", v2},
		{"relative path", "0::app\n", v2},
		{"v2 path outside the namespace", "0::/../../other\n", v2},
		{"v1 path outside the namespace", "5:memory:/../x\n", v1},
		{"deleted cgroup", "0::/gone (deleted)\n", v2},
		{"no v2 mount", "0::/\n", v1},
		{"no v1 memory mount", "5:memory:/\n", v2},
	} {
		root, cgroupFile := fakeRoot(t, c.procSelf, c.files)
		if g, err := FindIn(cgroupFile, root); err == nil {
			t.Errorf("%s: FindIn = %v, want an error", c.name, g)
		}
	}
	if _, err := FindIn(filepath.Join(t.TempDir(), "none"), t.TempDir()); err == nil {
		t.Errorf("missing cgroup file: no error")
	}
}

// Garbage in any file is unknown, never a zero or a guess.
func TestGarbageIsUnknown(t *testing.T) {
	for _, bad := range []string{"", "\n", "x", "-1", "1.5", "0x10", "18446744073709551616", "max max", strings.Repeat("1", maxFile+1)} {
		g, _ := find(t, "0::/a\n", map[string]string{
			"cgroup.controllers": "memory\n",
			"a/memory.events":    "oom_kill " + bad + "\n",
			"a/memory.max":       bad,
			"a/memory.peak":      bad,
		})
		if got := g.Read(); got != (Reading{}) {
			t.Errorf("%.20q: Read = %+v, want nothing known", bad, got)
		}
	}
	// A key that is only a prefix, or a line without a value, is not oom_kill.
	g, _ := find(t, "0::/\n", map[string]string{
		"cgroup.controllers": "memory\n",
		"memory.events":      "oom_kill_x 1\noom_kill\noom 2\n",
	})
	if r := g.Read(); r.HasOOM {
		t.Errorf("Read = %+v, want no counter", r)
	}
	// Files that are not there at all (the root cgroup has none).
	g, _ = find(t, "0::/\n", map[string]string{"cgroup.controllers": "memory\n"})
	if r := g.Read(); r != (Reading{}) {
		t.Errorf("Read = %+v, want nothing known", r)
	}
}

func TestZeroGroup(t *testing.T) {
	var g Group
	if g.Read() != (Reading{}) || g.Version() != 0 || g.Dir() != "" || g.String() != "no memory cgroup" {
		t.Errorf("zero group: %v %+v", g, g.Read())
	}
}

func TestOOMKilled(t *testing.T) {
	known := func(n uint64) Reading { return Reading{OOMKills: n, HasOOM: true} }
	for _, c := range []struct {
		name          string
		before, after Reading
		killed, known bool
	}{
		{"no kill", known(0), known(0), false, true},
		{"a kill", known(0), known(1), true, true},
		// A count from before the child started is not the child's.
		{"earlier kills only", known(3), known(3), false, true},
		{"a kill after earlier ones", known(3), known(4), true, true},
		{"counter went back", known(4), known(3), false, true},
		{"before unknown", Reading{}, known(1), false, false},
		{"after unknown", known(0), Reading{}, false, false},
		{"both unknown", Reading{}, Reading{}, false, false},
		// A zero value without HasOOM is unknown, whatever else is known.
		{"unknown zero", Reading{HasLimit: true, HasPeak: true}, known(1), false, false},
	} {
		killed, ok := OOMKilled(c.before, c.after)
		if killed != c.killed || ok != c.known {
			t.Errorf("%s: OOMKilled = %v, %v, want %v, %v", c.name, killed, ok, c.killed, c.known)
		}
	}
}

func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		r    Reading
		want string
	}{
		{Reading{Peak: 255 << 20, HasPeak: true, Limit: 256 << 20, HasLimit: true}, "255 MiB used of a 256 MiB limit"},
		// Just under the limit is never rounded up to it.
		{Reading{Peak: 256<<20 - 1, HasPeak: true, Limit: 256 << 20, HasLimit: true}, "255 MiB used of a 256 MiB limit"},
		{Reading{Peak: 1932735283, HasPeak: true, Limit: 2 << 30, HasLimit: true}, "1.7 GiB used of a 2 GiB limit"},
		{Reading{Peak: 100 << 20, HasPeak: true, HasLimit: true, Unlimited: true}, "100 MiB used, no memory limit"},
		{Reading{Peak: 100 << 20, HasPeak: true}, "100 MiB used, limit unknown"},
		{Reading{Limit: 64 << 20, HasLimit: true}, "peak use unknown, 64 MiB limit"},
		{Reading{HasLimit: true, Unlimited: true}, "peak use unknown, no memory limit"},
		{Reading{OOMKills: 1, HasOOM: true}, "peak use unknown, limit unknown"},
		// A zero peak that was read is a zero, not unknown.
		{Reading{HasPeak: true, Limit: 512, HasLimit: true}, "0 B used of a 512 B limit"},
	} {
		if got := c.r.Describe(); got != c.want {
			t.Errorf("Describe(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[uint64]string{
		0:                   "0 B",
		1023:                "1023 B",
		1024:                "1 KiB",
		1536:                "1 KiB",
		1<<20 - 1:           "1023 KiB",
		64 << 20:            "64 MiB",
		1<<30 - 1:           "1023 MiB",
		3 << 29:             "1.5 GiB",
		1<<40 + 1<<39:       "1.5 TiB",
		1<<64 - 1:           "16383.9 PiB",
		9223372036854771712: "8191.9 PiB",
	} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}
