package kubernetes

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// cgroupRoot holds every pod's cgroup, in every hierarchy: one tree to
// remove at teardown.
const cgroupRoot = "/lfinit-k8s-test"

// writeFiles makes the node's directories, certificates and
// configuration, and its binaries (the pause program built here).
func (n *node) writeFiles() error {
	for _, d := range []string{"log", "pki", "bin", "etcd", "cni", "cni-ipam", "images", "kubelet", "runc"} {
		if err := os.MkdirAll(n.path(d), 0o700); err != nil {
			return err
		}
	}
	var err error
	if n.pki, err = newPKI(n.path("pki")); err != nil {
		return err
	}
	for _, c := range []struct {
		name, cn string
		orgs     []string
		hosts    []string
	}{
		{"apiserver", "kube-apiserver", nil, []string{"127.0.0.1", hostAddr, "10.231.78.1", "localhost", "kubernetes.default.svc"}},
		{"admin", "lfinit-test-admin", []string{"system:masters"}, nil},
		{"sa", "service-accounts", nil, nil},
	} {
		if err := n.pki.issue(c.name, c.cn, c.orgs, c.hosts...); err != nil {
			return err
		}
	}
	for _, t := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"} {
		if err := os.Symlink(filepath.Join(n.bin, t), n.path("bin", t)); err != nil {
			return err
		}
	}
	if out, err := goBuild(n.path("bin", "pause"), "./pause"); err != nil {
		return fmt.Errorf("build pause: %v: %s", err, out)
	}
	for _, h := range cgroupHierarchies() {
		if err := os.MkdirAll(filepath.Join(h, cgroupRoot), 0o755); err != nil {
			return err
		}
	}
	if err := n.bridgeUp(); err != nil {
		return err
	}
	files := map[string]string{
		"admin.kubeconfig":       n.kubeconfig(),
		"containerd.toml":        n.containerdConfig(),
		"kubelet.yaml":           n.kubeletConfig(),
		"kube-proxy.yaml":        n.kubeProxyConfig(),
		"cni/10-lfinit.conflist": n.cniConfig(),
	}
	for name, text := range files {
		if err := os.WriteFile(n.path(name), []byte(text), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// goBuild builds a static program of this module.
func goBuild(out, pkg string) ([]byte, error) {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}

// bridgeUp makes the node's bridge with the host's one address on it:
// the route to the pods is the bridge's own, and no other route is added.
func (n *node) bridgeUp() error {
	for _, args := range [][]string{
		{"link", "add", bridgeName, "type", "bridge"},
		{"addr", "add", hostAddr + "/24", "dev", bridgeName},
		{"link", "set", bridgeName, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

func (n *node) kubeconfig() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: lfinit-test
  cluster: {server: "https://127.0.0.1:%d", certificate-authority: %q}
users:
- name: admin
  user: {client-certificate: %q, client-key: %q}
contexts:
- name: lfinit-test
  context: {cluster: lfinit-test, user: admin}
current-context: lfinit-test
`, n.ports["apiserver"], n.pki.path("ca.crt"), n.pki.path("admin.crt"), n.pki.path("admin.key"))
}

// containerdConfig keeps containerd's state under the node's directory;
// restrict_oom_score_adj because root here may not lower oom_score_adj,
// which the kubelet asks for every sandbox.
func (n *node) containerdConfig() string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[6]q
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[7]q
`, n.path("containerd", "root"), n.path("containerd", "state"), n.path("containerd.sock"),
		n.path("containerd", "opt"), pauseImage, n.path("cni"), n.path("runc"))
}

// kubeletConfig: the cgroupfs driver on this machine's cgroup v1 layout,
// no eviction on a shared disk, and every pod's cgroup under cgroupRoot.
func (n *node) kubeletConfig() string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: %q}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: %s
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://%s
resolvConf: ""
evictionHard: {memory.available: "1Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
podLogsDir: %s
`, n.ports["kubelet"], n.pki.path("ca.crt"), cgroupRoot, n.path("containerd.sock"), n.path("pod-logs"))
}

// kubeProxyConfig: iptables mode, no NodePorts on the loopback, no
// conntrack tuning of the host's, masquerading only what comes to a
// ClusterIP from outside the pods' range.
func (n *node) kubeProxyConfig() string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: %q}
mode: iptables
clusterCIDR: %s
bindAddress: 127.0.0.1
healthzBindAddress: ""
metricsBindAddress: ""
nodePortAddresses: [%s/32]
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
`, n.path("admin.kubeconfig"), podSubnet, hostAddr)
}

func (n *node) cniConfig() string {
	return fmt.Sprintf(`{"cniVersion": "0.4.0", "name": "lfinit-test", "plugins": [{
  "type": "bridge", "bridge": %q, "isGateway": false, "ipMasq": false,
  "ipam": {"type": "host-local", "dataDir": %q,
    "ranges": [[{"subnet": %q, "rangeStart": "10.231.77.10"}]]}}]}
`, bridgeName, n.path("cni-ipam"), podSubnet)
}

// cgroupHierarchies are the mounted cgroup hierarchies (v1 and v2).
func cgroupHierarchies() []string {
	data, _ := os.ReadFile("/proc/self/mounts")
	var hs []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && (f[2] == "cgroup" || f[2] == "cgroup2") {
			hs = append(hs, f[1])
		}
	}
	return hs
}
