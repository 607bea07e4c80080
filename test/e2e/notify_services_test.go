package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/statusfile"
)

// pgBin is Debian's PostgreSQL 15 server, linked with libsystemd.
const pgBin = "/usr/lib/postgresql/15/bin/"

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// asPostgres runs a command as the postgres user and fails the test on error.
func asPostgres(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("runuser", append([]string{"-u", "postgres", "--"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return string(out)
}

// crashedCluster is a fresh cluster left by an immediate stop with a few
// hundred megabytes of WAL to replay: its next start is a crash recovery,
// during which the port is open while every query fails.
func crashedCluster(t *testing.T) (data, sock string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "lfinit-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	data, sock = filepath.Join(dir, "data"), filepath.Join(dir, "sock")
	for _, d := range []string{data, sock} {
		os.Mkdir(d, 0o700)
		exec.Command("chown", "postgres:", d).Run()
	}
	asPostgres(t, pgBin+"initdb", "-D", data, "-A", "trust", "-U", "postgres")
	pm := exec.Command("runuser", "-u", "postgres", "--", pgBin+"postgres", "-D", data, "-k", sock, "-c", "listen_addresses=",
		"-c", "checkpoint_timeout=1h", "-c", "max_wal_size=4GB")
	if err := pm.Start(); err != nil {
		t.Fatal(err)
	}
	defer pm.Process.Kill()
	waitFor(t, 60*time.Second, "postgres to accept connections", func() bool {
		return exec.Command("pg_isready", "-q", "-h", sock).Run() == nil
	})
	asPostgres(t, "psql", "-q", "-h", sock, "-U", "postgres", "-c", "create table t as select generate_series(1, 2000000) g")
	// runuser waits for postgres: SIGQUIT to postgres itself (the first
	// line of its postmaster.pid) is the immediate stop, which leaves the
	// WAL unreplayed.
	b, _ := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	pid, _ := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if pid <= 0 {
		t.Fatalf("postmaster.pid: %q", b)
	}
	syscall.Kill(pid, syscall.SIGQUIT)
	pm.Wait()
	return data, sock
}

// startupProcess is postgres' startup (recovery) process below pid, or 0.
func startupProcess(pid int) int {
	for _, p := range descendantsOf(pid) {
		if cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline"); strings.HasPrefix(string(cmd), "postgres: startup") {
			return p
		}
	}
	return 0
}

// TestNotifyPostgresCrashRecovery: PostgreSQL 15 restarted after an
// immediate stop opens its port long before it can answer a query (crash
// recovery: "the database system is starting up"); a --ready-tcp probe
// would say ready. With --ready-notify, lfinit stays starting until
// postgres sends READY=1, and once it says ready a query succeeds. The
// recovery is held (SIGSTOP) while the test looks, so the window does not
// depend on the machine's speed.
func TestNotifyPostgresCrashRecovery(t *testing.T) {
	long(t)
	needRoot(t)
	needProgram(t, pgBin+"postgres")
	needProgram(t, "psql")
	data, sock := crashedCluster(t)
	port := freePort(t)
	r := startSubreaper(t, "--ready-notify", "abstract", "--user", "postgres", "--stop-signal", "INT", "--status-file", "DIR/status.json",
		"--", pgBin+"postgres", "-D", data, "-k", sock, "-c", "listen_addresses=127.0.0.1", "-p", port, "-c", "checkpoint_timeout=1h")
	status := r.path("status.json")
	s := waitStatus(t, status, "the child's pid", func(s statusfile.Status) bool { return s.ChildPid != nil })
	var startup int
	waitFor(t, 60*time.Second, "postgres' startup process", func() bool {
		startup = startupProcess(*s.ChildPid)
		return startup > 0 || readStatus(t, status).Ready
	})
	if startup == 0 {
		t.Fatal("postgres finished its recovery before the test saw it")
	}
	syscall.Kill(startup, syscall.SIGSTOP)
	query := func() (string, error) {
		out, err := exec.Command("psql", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-Atc", "select count(*) from t").CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	var out string
	waitFor(t, 60*time.Second, "the port open while queries fail", func() bool {
		o, err := query()
		out = o
		return err != nil && strings.Contains(o, "starting up")
	})
	if s := readStatus(t, status); s.Phase != statusfile.Starting || s.Ready || probe(t, "ready", status) != 1 {
		t.Fatalf("lfinit says %s (ready %v) while postgres answers %q", s.Phase, s.Ready, out)
	}
	syscall.Kill(startup, syscall.SIGCONT)
	waitStatus(t, status, "ready", func(s statusfile.Status) bool { return s.Ready })
	if o, err := query(); err != nil || o != "2000000" {
		t.Fatalf("lfinit is ready, and the query answers %q (%v)", o, err)
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestNotifyRedisLoading: redis-server --supervised systemd sends READY=1
// only once its dataset is loaded (before that its open port answers
// -LOADING). Sampled throughout the start, lfinit's readiness is read
// first and a PING second: whenever lfinit said ready, the PING answers
// PONG. Redis' own STATUS= line reaches the status file.
func TestNotifyRedisLoading(t *testing.T) {
	long(t)
	needRoot(t)
	needProgram(t, "redis-server")
	needProgram(t, "redis-cli")
	t.Parallel()
	dir := tempDir(t)
	port := freePort(t)
	seed := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--enable-debug-command", "yes")
	if err := seed.Start(); err != nil {
		t.Fatal(err)
	}
	defer seed.Process.Kill()
	cli := func(args ...string) string {
		out, _ := exec.Command("redis-cli", append([]string{"-p", port}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	waitFor(t, 30*time.Second, "the seeding redis", func() bool { return cli("ping") == "PONG" })
	if out := cli("debug", "populate", "1000000"); out != "OK" {
		t.Fatalf("debug populate: %s", out)
	}
	if out := cli("save"); out != "OK" {
		t.Fatalf("save: %s", out)
	}
	seed.Process.Kill()
	seed.Wait()
	r := startSubreaper(t, "--ready-notify", "abstract", "--status-file", "DIR/status.json",
		"--", "redis-server", "--supervised", "systemd", "--port", port, "--bind", "127.0.0.1", "--dir", dir, "--save", "")
	status := r.path("status.json")
	loading := 0
	waitFor(t, 60*time.Second, "redis ready", func() bool {
		s, err := os.ReadFile(status)
		ready := err == nil && strings.Contains(string(s), `"ready": true`)
		pong := cli("ping")
		if ready && pong != "PONG" {
			t.Fatalf("lfinit said ready while redis answered %q", pong)
		}
		if strings.HasPrefix(pong, "LOADING") {
			loading++
		}
		return ready
	})
	t.Logf("redis answered LOADING %d times while lfinit said starting", loading)
	s := readStatus(t, status)
	if s.ServiceStatus == nil || !strings.Contains(*s.ServiceStatus, "Ready to accept connections") {
		t.Fatalf("service status %v", s.ServiceStatus)
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// tempDir is a temporary directory on disk, removed with the test.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lfinit-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestNotifyHAProxyMasterWorker: haproxy -Ws (master-worker, systemd
// mode) says READY=1 once its worker serves; a reload (SIGUSR2, relayed
// to the master) is RELOADING=1 then READY=1 again, and its MAINPID is
// the child lfinit follows.
func TestNotifyHAProxyMasterWorker(t *testing.T) {
	long(t)
	needProgram(t, "haproxy")
	t.Parallel()
	port, cfg := freePort(t), filepath.Join(tempDir(t), "haproxy.cfg")
	os.WriteFile(cfg, []byte(`global
    log stderr format raw local0 notice
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend f
    bind 127.0.0.1:`+port+`
    http-request return status 200 content-type text/plain string ok
`), 0o644)
	r := startSubreaper(t, "--ready-notify", "abstract", "--status-file", "DIR/status.json", "--metrics-addr", "127.0.0.1:0",
		"--", "haproxy", "-Ws", "-f", cfg)
	addr, status := r.metricsAddr(), r.path("status.json")
	waitStatus(t, status, "ready", func(s statusfile.Status) bool { return s.Ready })
	if code, body := get(t, "http://127.0.0.1:"+port+"/"); code != 200 || body != "ok" {
		t.Fatalf("haproxy answered %d %q once lfinit said ready", code, body)
	}
	count := func(kind string) int {
		_, body := get(t, "http://"+addr+"/metrics")
		n, _ := strconv.Atoi(metricValue(body, `lfinit_notify_messages_total{kind="`+kind+`"}`))
		return n
	}
	reloads, readies := count("reloading"), count("ready")
	r.signal(syscall.SIGUSR2)
	waitFor(t, 30*time.Second, "haproxy's reload: RELOADING=1, then READY=1", func() bool {
		return count("reloading") > reloads && count("ready") > readies
	})
	if s := readStatus(t, status); !s.Ready || *s.ServiceState != "ready" {
		t.Fatalf("after the reload: ready %v, service %s", s.Ready, *s.ServiceState)
	}
	if strings.Contains(r.stderr.String(), "MAINPID: lfinit follows") || strings.Contains(r.stderr.String(), "refused MAINPID") {
		t.Fatalf("haproxy's MAINPID, the child itself, was taken for another process:\n%s", r.stderr.String())
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
