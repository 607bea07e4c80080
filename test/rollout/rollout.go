// Package rollout measures a rolling restart behind a real load balancer:
// HAProxy, with active health checks against lfinit's /readyz, in front of
// two instances of test/rollout/server, each wrapped by lfinit. A client
// loop sends requests through HAProxy while each instance in turn gets
// SIGTERM, exits and is started again; Run counts the requests that failed.
// Everything listens on 127.0.0.1.
//
// The test in this package asserts that no request fails when the drain
// delay is longer than HAProxy's detection time; ./cmd prints the table.
package rollout

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/template"
	"time"
)

// Binaries are the programs a rollout runs.
type Binaries struct {
	LFinit  string // lfinit, built from this checkout
	Server  string // test/rollout/server
	HAProxy string // the system's haproxy
}

// FindHAProxy returns the path of haproxy, or an error that says how to install it.
func FindHAProxy() (string, error) {
	p, err := exec.LookPath("haproxy")
	if err != nil {
		// Debian puts it in /usr/sbin, which a non-root PATH may lack.
		if _, serr := os.Stat("/usr/sbin/haproxy"); serr == nil {
			return "/usr/sbin/haproxy", nil
		}
		return "", errors.New("haproxy is not installed; install it with scripts/install-qualification-deps (apt-get install haproxy)")
	}
	return p, nil
}

// Build compiles lfinit and the server from the module at root into dir and finds haproxy.
func Build(root, dir string) (Binaries, error) {
	hp, err := FindHAProxy()
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{LFinit: filepath.Join(dir, "lfinit"), Server: filepath.Join(dir, "server"), HAProxy: hp}
	for bin, pkg := range map[string]string{b.LFinit: "./cmd/lfinit", b.Server: "./test/rollout/server"} {
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return Binaries{}, fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return b, nil
}

// ModuleRoot returns the directory of the go.mod of the current module.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the lfinit module (run from the repository)")
	}
	return filepath.Dir(mod), nil
}

// Config is one configuration of the rollout.
type Config struct {
	Name       string
	DrainDelay time.Duration // lfinit --drain-delay
	Grace      time.Duration // lfinit --grace
	Inter      time.Duration // HAProxy check interval
	Fall       int           // failed checks before HAProxy marks a server down
	Rise       int           // passed checks before HAProxy marks it up again
	Rate       int           // requests per second sent through HAProxy
	Work       time.Duration // time the server spends on each request
	Startup    time.Duration // time the server takes to start listening
	Redispatch bool          // HAProxy retries on another server (option redispatch)
}

// Detection is HAProxy's time to notice a failing server: inter × fall.
func (c Config) Detection() time.Duration { return c.Inter * time.Duration(c.Fall) }

// Defaults fills in the zero fields.
func (c Config) Defaults() Config {
	if c.Grace == 0 {
		c.Grace = 5 * time.Second
	}
	if c.Inter == 0 {
		c.Inter = 200 * time.Millisecond
	}
	if c.Fall == 0 {
		c.Fall = 2
	}
	if c.Rise == 0 {
		c.Rise = 2
	}
	if c.Rate == 0 {
		c.Rate = 200
	}
	if c.Work == 0 {
		c.Work = 20 * time.Millisecond
	}
	if c.Startup == 0 {
		c.Startup = 1500 * time.Millisecond
	}
	return c
}

// Result is what one rollout measured.
type Result struct {
	Config   Config
	Requests int64
	Failed   int64
	Kinds    map[string]int64 // failure → count
	P99, Max time.Duration    // latency of the requests that succeeded
	Exits    []int            // lfinit's exit code for each stop
	Stops    []time.Duration  // SIGTERM → lfinit exited, for each stop
	Took     time.Duration
}

// KindsString lists the failures by kind, most frequent first, e.g. "503×12, EOF×2".
func (r Result) KindsString() string {
	if len(r.Kinds) == 0 {
		return "-"
	}
	type kv struct {
		k string
		v int64
	}
	var kvs []kv
	for k, v := range r.Kinds {
		kvs = append(kvs, kv{k, v})
	}
	slices.SortFunc(kvs, func(a, b kv) int {
		if a.v != b.v {
			return int(b.v - a.v)
		}
		return strings.Compare(a.k, b.k)
	})
	var parts []string
	for _, e := range kvs {
		parts = append(parts, fmt.Sprintf("%s×%d", e.k, e.v))
	}
	return strings.Join(parts, ", ")
}

// haproxyConfig is deliberately plain: active HTTP checks on each
// instance's lfinit port and HAProxy's default retries: 3, to the same
// server (no redispatch), min(timeout connect, 1s) apart. The instance
// comes back on the same port, so a retry window longer than its restart
// would hide the outage, which a real rolling update (a new pod at a new
// address) never does: timeout connect is short (200ms) and the server
// takes longer to start (1.5s) than the 3 retries take (600ms).
var haproxyConfig = template.Must(template.New("haproxy").Parse(`global
    stats socket {{.Socket}} mode 600 level admin
    maxconn 1000
    log stdout format raw local0 info

defaults
    mode http
    log global
    option httplog
    retries 3
    timeout connect 200ms
    timeout client 10s
    timeout server 10s
    timeout check 1s

frontend fe
    bind 127.0.0.1:{{.Front}}
    default_backend be

backend be
    balance roundrobin
{{- if .Redispatch}}
    option redispatch 1
{{- end}}
    option httpchk
    http-check send meth GET uri /readyz
    http-check expect status 200
    default-server inter {{.Inter}} fall {{.Fall}} rise {{.Rise}}
{{- range .Servers}}
    server {{.Name}} 127.0.0.1:{{.Port}} check port {{.MetricsPort}}
{{- end}}
`))

// instance is one lfinit wrapping one server.
type instance struct {
	name        string
	port        int
	metricsPort int
	logPath     string

	cmd  *exec.Cmd
	done chan struct{}
	code int
}

// Name, Port and MetricsPort are read by the HAProxy template.
func (in *instance) Name() string     { return in.name }
func (in *instance) Port() int        { return in.port }
func (in *instance) MetricsPort() int { return in.metricsPort }

// rollout is one run in progress.
type rollout struct {
	bins   Binaries
	dir    string
	c      Config
	logf   func(string, ...any)
	socket string
	insts  []*instance
}

// Run performs one rolling restart with configuration c in dir and reports
// what failed. Every process it starts is gone when it returns.
func Run(ctx context.Context, bins Binaries, dir string, c Config, logf func(string, ...any)) (res Result, err error) {
	c = c.Defaults()
	if logf == nil {
		logf = func(string, ...any) {}
	}
	res = Result{Config: c, Kinds: map[string]int64{}}
	ports, err := freePorts(5)
	if err != nil {
		return res, err
	}
	r := &rollout{bins: bins, dir: dir, c: c, logf: logf, socket: filepath.Join(dir, "haproxy.sock")}
	for i, name := range []string{"a", "b"} {
		r.insts = append(r.insts, &instance{name: name, port: ports[1+2*i], metricsPort: ports[2+2*i],
			logPath: filepath.Join(dir, "lfinit-"+name+".log")})
	}
	defer r.stopAll()

	hp, err := r.startHAProxy(ports[0])
	if err != nil {
		return res, err
	}
	defer func() {
		// SIGUSR1 is HAProxy's soft stop; SIGKILL if it lingers.
		hp.Process.Signal(syscall.SIGUSR1)
		waitProcess(hp, 5*time.Second)
	}()
	for _, in := range r.insts {
		if err := r.start(in); err != nil {
			return res, err
		}
	}
	for _, in := range r.insts {
		if err := r.waitStatus(ctx, in.name, "UP", 0, c.Startup+15*time.Second); err != nil {
			return res, err
		}
	}

	cl := newClient(fmt.Sprintf("http://127.0.0.1:%d/", ports[0]), c.Rate)
	begun := time.Now()
	cl.start()
	stopped := false
	stopClient := func() {
		if !stopped {
			stopped = true
			cl.stop()
			res.Requests, res.Failed, res.Kinds = cl.counts()
			res.P99, res.Max = cl.latency()
			res.Took = time.Since(begun)
		}
	}
	defer stopClient()
	if err := cl.waitOK(ctx, 20, 10*time.Second); err != nil {
		return res, fmt.Errorf("warm-up: %w", err)
	}
	for _, in := range r.insts {
		downs, err := r.downs(in.name)
		if err != nil {
			return res, err
		}
		t0 := time.Now()
		if err := in.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return res, fmt.Errorf("SIGTERM to lfinit %s: %w", in.name, err)
		}
		select {
		case <-in.done:
		case <-time.After(c.Grace + 5*time.Second):
			return res, fmt.Errorf("lfinit %s still running %v after SIGTERM", in.name, time.Since(t0))
		case <-ctx.Done():
			return res, ctx.Err()
		}
		res.Stops = append(res.Stops, time.Since(t0))
		res.Exits = append(res.Exits, in.code)
		logf("%s: stopped %s in %v (lfinit exit %d); starting it again", c.Name, in.name, time.Since(t0).Round(time.Millisecond), in.code)
		if err := r.start(in); err != nil {
			return res, err
		}
		// One instance out at a time: the next stop waits until HAProxy has
		// seen this one go down and come back up. "UP" alone is not enough:
		// a restart faster than the checks would still show the old UP.
		// (It always goes down: lfinit answers 503 while the server starts.)
		if err := r.waitStatus(ctx, in.name, "UP", downs+1, c.Startup+15*time.Second); err != nil {
			return res, err
		}
	}
	if err := cl.waitOK(ctx, cl.ok.Load()+20, 10*time.Second); err != nil {
		return res, fmt.Errorf("after the rollout: %w", err)
	}
	stopClient()
	return res, nil
}

// startHAProxy checks and starts HAProxy in the foreground on port front.
func (r *rollout) startHAProxy(front int) (*exec.Cmd, error) {
	cfgPath := filepath.Join(r.dir, "haproxy.cfg")
	f, err := os.Create(cfgPath)
	if err != nil {
		return nil, err
	}
	err = haproxyConfig.Execute(f, map[string]any{
		"Socket": r.socket, "Front": front, "Servers": r.insts,
		"Inter": r.c.Inter.Milliseconds(), "Fall": r.c.Fall, "Rise": r.c.Rise, "Redispatch": r.c.Redispatch,
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if out, err := exec.Command(r.bins.HAProxy, "-c", "-q", "-f", cfgPath).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("haproxy -c %s: %v\n%s", cfgPath, err, out)
	}
	logFile, err := os.Create(filepath.Join(r.dir, "haproxy.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(r.bins.HAProxy, "-db", "-f", cfgPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	err = cmd.Start()
	logFile.Close() // the child has its own copy
	if err != nil {
		return nil, fmt.Errorf("start haproxy: %w", err)
	}
	return cmd, nil
}

// start runs lfinit wrapping the server for in.
func (r *rollout) start(in *instance) error {
	logFile, err := os.OpenFile(in.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	addr := "127.0.0.1:" + strconv.Itoa(in.port)
	in.cmd = exec.Command(r.bins.LFinit,
		"--grace", r.c.Grace.String(),
		"--drain-delay", r.c.DrainDelay.String(),
		"--metrics-addr", "127.0.0.1:"+strconv.Itoa(in.metricsPort),
		// /readyz says 200 only once the server accepts connections.
		"--ready-tcp", addr,
		"--log-format", "json",
		"--log-level", "debug", // its "started" line is read
		"--termination-log", "none",
		"--", r.bins.Server, "-listen", addr, "-name", in.name,
		"-work", r.c.Work.String(), "-startup", r.c.Startup.String())
	in.cmd.Stdout, in.cmd.Stderr = io.Discard, logFile
	in.done = make(chan struct{})
	if err := in.cmd.Start(); err != nil {
		return fmt.Errorf("start lfinit %s: %w", in.name, err)
	}
	cmd, done := in.cmd, in.done
	go func() {
		cmd.Wait()
		in.code = cmd.ProcessState.ExitCode()
		close(done)
	}()
	return nil
}

// stopAll ends every instance still running: SIGTERM, which lfinit bounds
// by its own hard deadline, then SIGKILL to lfinit and its child if that fails.
func (r *rollout) stopAll() {
	for _, in := range r.insts {
		if in.cmd == nil {
			continue
		}
		select {
		case <-in.done:
			continue
		default:
		}
		in.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-in.done:
		case <-time.After(r.c.Grace + 2*time.Second):
			if pid := childPid(in.logPath); pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			in.cmd.Process.Kill()
			<-in.done
		}
	}
}

// childPid is the pid of the last child lfinit logged starting, 0 if none.
func childPid(logPath string) int {
	f, err := os.Open(logPath)
	if err != nil {
		return 0
	}
	defer f.Close()
	pid := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Msg string `json:"msg"`
			Pid int    `json:"pid"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "started" {
			pid = l.Pid
		}
	}
	return pid
}

// waitStatus waits until HAProxy reports server name in backend be as
// want, after at least minDowns UP→DOWN transitions of that server and a
// passed check: at HAProxy's start a server is UP before any check.
func (r *rollout) waitStatus(ctx context.Context, name, want string, minDowns int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) {
		st, err := serverStats(r.socket)
		if err == nil {
			s := st[name]
			last = fmt.Sprintf("%s after %d downs, last check %s", s.status, s.downs, s.check)
			if s.status == want && s.downs >= minDowns && s.check == "L7OK" {
				return nil
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("HAProxy never reported server %s %s after %d downs within %v (last: %s)", name, want, minDowns, limit, last)
}

// downs is how many times HAProxy has marked server name down.
func (r *rollout) downs(name string) (int, error) {
	st, err := serverStats(r.socket)
	if err != nil {
		return 0, err
	}
	return st[name].downs, nil
}

// stat is what HAProxy says about one server.
type stat struct {
	status string // UP, DOWN, "UP 1/2" (going down), "DOWN 1/2" (going up), MAINT, …
	downs  int    // UP→DOWN transitions so far (chkdown)
	check  string // the last check's result: L7OK, L7STS (5xx), L4CON (refused), INI, …
}

// serverStats asks HAProxy's stats socket about each server of backend be.
func serverStats(socket string) (map[string]stat, error) {
	conn, err := net.DialTimeout("unix", socket, time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(conn, "show stat\n"); err != nil {
		return nil, err
	}
	out, err := io.ReadAll(conn)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "# ") {
		return nil, fmt.Errorf("unexpected stats output %q", out)
	}
	col := map[string]int{}
	for i, h := range strings.Split(strings.TrimPrefix(lines[0], "# "), ",") {
		col[h] = i
	}
	st := map[string]stat{}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) <= max(col["status"], col["chkdown"], col["check_status"]) || f[col["pxname"]] != "be" {
			continue
		}
		downs, _ := strconv.Atoi(f[col["chkdown"]])
		// "* L7OK" while a check is running: the last result is what counts.
		check := strings.TrimPrefix(f[col["check_status"]], "* ")
		st[f[col["svname"]]] = stat{status: f[col["status"]], downs: downs, check: check}
	}
	return st, nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitProcess waits for cmd to exit, killing it after limit.
func waitProcess(cmd *exec.Cmd, limit time.Duration) {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
	}
}

// client is the bounded request loop: it starts requests through HAProxy
// at a fixed rate, each in its own goroutine, until stopped. Open loop on
// purpose: a client that waited for each answer would send fewer requests
// while HAProxy retries a dead server (and more while it answers 503 at
// once), so the counts would measure the client, not the restart.
type client struct {
	url      string
	interval time.Duration
	http     *http.Client
	quit     chan struct{}
	wg       sync.WaitGroup
	inflight chan struct{} // bounds the goroutines if HAProxy stops answering

	ok     atomic.Int64
	failed atomic.Int64
	mu     sync.Mutex
	kinds  map[string]int64
	took   []time.Duration // of each request that succeeded
}

func newClient(u string, rate int) *client {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	return &client{url: u, interval: time.Second / time.Duration(rate), quit: make(chan struct{}),
		inflight: make(chan struct{}, 1000), kinds: map[string]int64{},
		http: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
}

func (c *client) start() {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		tick := time.NewTicker(c.interval)
		defer tick.Stop()
		for {
			select {
			case <-c.quit:
				return
			case <-tick.C:
			}
			select {
			case c.inflight <- struct{}{}:
			case <-c.quit:
				return
			}
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				c.one()
				<-c.inflight
			}()
		}
	}()
}

// one sends one request and counts its fate.
func (c *client) one() {
	begun := time.Now()
	resp, err := c.http.Get(c.url)
	kind := ""
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		kind = err.Error()
	default:
		_, rerr := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode != http.StatusOK:
			kind = strconv.Itoa(resp.StatusCode)
		case rerr != nil:
			kind = "body: " + rerr.Error()
		}
	}
	if kind == "" {
		took := time.Since(begun)
		c.mu.Lock()
		c.took = append(c.took, took)
		c.mu.Unlock()
		c.ok.Add(1)
		return
	}
	c.failed.Add(1)
	c.mu.Lock()
	c.kinds[kind]++
	c.mu.Unlock()
}

// waitOK waits until at least n requests have succeeded.
func (c *client) waitOK(ctx context.Context, n int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for c.ok.Load() < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d requests succeeded within %v (%d failed)", c.ok.Load(), n, limit, c.failed.Load())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// stop stops sending and waits for the answers to the requests in flight
// (bounded by the client's timeout).
func (c *client) stop() {
	close(c.quit)
	c.wg.Wait()
	c.http.CloseIdleConnections()
}

func (c *client) counts() (total, failed int64, kinds map[string]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kinds = make(map[string]int64, len(c.kinds))
	for k, v := range c.kinds {
		kinds[k] = v
	}
	return c.ok.Load() + c.failed.Load(), c.failed.Load(), kinds
}

// latency is the 99th percentile and the maximum of the successful requests' durations.
func (c *client) latency() (p99, maxd time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.took) == 0 {
		return 0, 0
	}
	d := slices.Clone(c.took)
	slices.Sort(d)
	return d[(len(d)-1)*99/100], d[len(d)-1]
}
