package kubernetes

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The node's network: a bridge of its own, with one address on the host
// side so that the kubelet can probe pods, no gateway, no NAT and no
// route off the machine.
const (
	nodeName   = "lfinit-node"
	bridgeName = "lfk8s0"
	hostAddr   = "10.231.77.1"
	podSubnet  = "10.231.77.0/24"
	svcSubnet  = "10.231.78.0/24"
	pauseImage = "localhost/lfinit-test/pause:1"
)

// node is a single-node cluster: etcd, the control plane, containerd and
// a kubelet, every file under dir and every process its own.
type node struct {
	dir     string
	bin     string // the Kubernetes binaries
	pki     *pki
	procs   []*exec.Cmd
	client  *kubernetes.Clientset
	sysctls map[string]string // what the kubelet changes, as it was
	ports   map[string]int
}

// up starts a node in dir with the binaries in bin and waits until it is
// Ready. The node it returns is to be torn down even when it fails.
func up(ctx context.Context, dir, bin string) (n *node, err error) {
	n = &node{dir: dir, bin: bin, ports: map[string]int{}, sysctls: map[string]string{}}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, n.logTails())
		}
	}()
	for _, k := range []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"} {
		b, _ := os.ReadFile("/proc/sys/" + k)
		n.sysctls[k] = strings.TrimSpace(string(b))
	}
	for _, name := range []string{"etcd", "etcd-peer", "apiserver", "kubelet"} {
		if n.ports[name], err = freePort(); err != nil {
			return n, err
		}
	}
	if err := n.writeFiles(); err != nil {
		return n, err
	}
	if err := n.startEtcd(); err != nil {
		return n, err
	}
	if err := n.startAPIServer(ctx); err != nil {
		return n, err
	}
	if err := n.startContainerd(ctx); err != nil {
		return n, err
	}
	for _, start := range []func() error{n.startControllerManager, n.startScheduler, n.startKubelet, n.startKubeProxy} {
		if err := start(); err != nil {
			return n, err
		}
	}
	return n, n.waitReady(ctx)
}

// path is a file or directory of the node's.
func (n *node) path(elem ...string) string {
	return filepath.Join(append([]string{n.dir}, elem...)...)
}

// run starts a component with its output in a log file of the node's.
func (n *node) run(name, prog string, args ...string) error {
	logf, err := os.Create(n.path("log", name+".log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(prog, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	n.procs = append(n.procs, cmd)
	return nil
}

func (n *node) startEtcd() error {
	return n.run("etcd", "etcd", "--data-dir", n.path("etcd"), "--name", "lfinit-test",
		"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", n.ports["etcd"]),
		"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", n.ports["etcd"]),
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", n.ports["etcd-peer"]),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", n.ports["etcd-peer"]),
		"--initial-cluster", fmt.Sprintf("lfinit-test=http://127.0.0.1:%d", n.ports["etcd-peer"]))
}

func (n *node) startAPIServer(ctx context.Context) error {
	p := n.pki.path
	err := n.run("kube-apiserver", n.path("bin", "kube-apiserver"),
		"--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", n.ports["etcd"]),
		"--bind-address", "127.0.0.1", "--advertise-address", hostAddr,
		"--secure-port", fmt.Sprint(n.ports["apiserver"]),
		"--endpoint-reconciler-type", "none",
		"--service-cluster-ip-range", svcSubnet,
		"--tls-cert-file", p("apiserver.crt"), "--tls-private-key-file", p("apiserver.key"),
		"--client-ca-file", p("ca.crt"),
		"--kubelet-client-certificate", p("admin.crt"), "--kubelet-client-key", p("admin.key"),
		"--service-account-key-file", p("sa.key"), "--service-account-signing-key-file", p("sa.key"),
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--authorization-mode", "Node,RBAC")
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", n.path("admin.kubeconfig"))
	if err != nil {
		return err
	}
	if n.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	return poll(ctx, 90*time.Second, "the apiserver to serve", func() (bool, error) {
		_, err := n.client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

func (n *node) startContainerd(ctx context.Context) error {
	if err := n.run("containerd", "containerd", "--config", n.path("containerd.toml")); err != nil {
		return err
	}
	if err := poll(ctx, 30*time.Second, "containerd to listen", func() (bool, error) {
		return n.ctr("version") == nil, nil
	}); err != nil {
		return err
	}
	return n.importImage(image{
		name:       pauseImage,
		files:      map[string]string{"/pause": n.path("bin", "pause")},
		entrypoint: []string{"/pause"},
	})
}

// ctr runs containerd's client on the node's containerd, in the CRI namespace.
func (n *node) ctr(args ...string) error {
	args = append([]string{"--address", n.path("containerd.sock"), "-n", "k8s.io"}, args...)
	out, err := exec.Command("ctr", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr %s: %v: %s", strings.Join(args[4:], " "), err, out)
	}
	return nil
}

// importImage puts img into the node's containerd.
func (n *node) importImage(img image) error {
	archive := n.path("images", strings.NewReplacer("/", "_", ":", "_").Replace(img.name)+".tar")
	if err := img.ociArchive(archive); err != nil {
		return err
	}
	return n.ctr("images", "import", "--no-unpack=false", archive)
}

func (n *node) startControllerManager() error {
	return n.run("kube-controller-manager", n.path("bin", "kube-controller-manager"),
		"--kubeconfig", n.path("admin.kubeconfig"), "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", "0",
		"--service-account-private-key-file", n.pki.path("sa.key"),
		"--root-ca-file", n.pki.path("ca.crt"),
		"--use-service-account-credentials=false",
		"--controllers", "*,-nodeipam,-persistentvolume-binder,-attachdetach,-persistentvolume-expander,-cloud-node-lifecycle,-ttl,-bootstrapsigner,-tokencleaner")
}

func (n *node) startScheduler() error {
	return n.run("kube-scheduler", n.path("bin", "kube-scheduler"),
		"--kubeconfig", n.path("admin.kubeconfig"), "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", "0")
}

func (n *node) startKubelet() error {
	return n.run("kubelet", n.path("bin", "kubelet"),
		"--kubeconfig", n.path("admin.kubeconfig"), "--config", n.path("kubelet.yaml"),
		"--hostname-override", nodeName, "--node-ip", hostAddr,
		"--root-dir", n.path("kubelet"), "--cert-dir", n.path("kubelet", "pki"), "--v", "2")
}

// startKubeProxy runs kube-proxy in iptables mode. Its rules touch only
// the service range and the pods' addresses; a route to the service range
// on the bridge makes the host's own connections to a ClusterIP leave
// from the bridge's address, which the pods reach without a gateway.
func (n *node) startKubeProxy() error {
	args := []string{"route", "add", svcSubnet, "dev", bridgeName, "src", hostAddr}
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return n.run("kube-proxy", n.path("bin", "kube-proxy"), "--config", n.path("kube-proxy.yaml"),
		"--hostname-override", nodeName)
}

// waitReady waits for the node to be Ready and the default service
// account to exist (pods are refused before it does).
func (n *node) waitReady(ctx context.Context) error {
	err := poll(ctx, 120*time.Second, "the node to be Ready", func() (bool, error) {
		nd, err := n.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range nd.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	return poll(ctx, 60*time.Second, "the default service account", func() (bool, error) {
		_, err := n.client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// freePort is a TCP port on the loopback that nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// poll calls check until it says done, fails, or limit passes.
func poll(ctx context.Context, limit time.Duration, what string, check func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %s waiting for %s", limit, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// logTails is the last lines of every component's log, for a failure.
func (n *node) logTails() string {
	var b strings.Builder
	logs, _ := filepath.Glob(n.path("log", "*.log"))
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) > 15 {
			lines = lines[len(lines)-15:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", filepath.Base(l), strings.Join(lines, "\n"))
	}
	return b.String()
}
