package netaddr

import (
	"strings"
	"testing"
)

func TestCheckHostPort(t *testing.T) {
	for _, tc := range []struct {
		addr string
		use  Use
		want string // "" when accepted, else a piece of the error
	}{
		{"127.0.0.1:8080", Connect, ""},
		{"localhost:1", Connect, ""},
		{"[::1]:65535", Connect, ""},
		{"[fe80::1%eth0]:80", Connect, ""},
		{":8080", Connect, ""},
		{"svc.ns.svc.cluster.local.:80", Connect, ""},
		{"_srv.example:80", Connect, ""},
		{"127.0.0.1:0", Listen, ""},
		{":0", Listen, ""},
		{"127.0.0.1:0", Connect, `port "0" is not a number from 1 to 65535`},
		{"localhost:99999", Connect, `port "99999" is not a number from 1 to 65535`},
		{"localhost:99999", Listen, `port "99999" is not a number from 0 to 65535`},
		{"localhost:80800", Connect, "from 1 to 65535"},
		{"localhost:-1", Connect, "from 1 to 65535"},
		{"localhost:http", Connect, "from 1 to 65535"},
		{"127.0.0.1:", Connect, `port "" is not`},
		{"8080", Connect, "is not HOST:PORT"},
		{"[::1:80", Connect, "is not HOST:PORT"},
		{"bad_host!:80", Connect, `host "bad_host!" is not an IP address or a DNS name`},
		{"exa mple:80", Connect, "is not an IP address"},
		{"127.0.0.256:80", Connect, "is not an IP address"},
		{"-lead:80", Connect, "is not an IP address"},
		{"a..b:80", Connect, "is not an IP address"},
		{strings.Repeat("a", 64) + ":80", Connect, "is not an IP address"},
	} {
		err := CheckHostPort(tc.addr, tc.use)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckHostPort(%q, %d) = %v, want nil", tc.addr, tc.use, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckHostPort(%q, %d) = %v, want an error with %q", tc.addr, tc.use, err, tc.want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string
	}{
		{"http://127.0.0.1:8080/healthz", ""},
		{"https://svc/ready", ""},
		{"http://user:pass@pushgateway.monitoring:9091", ""},
		{"http://[::1]:80/", ""},
		{"http://:8080/", ""},
		{"http://127.0.0.1:99999/x", `port "99999" is not a number from 1 to 65535`},
		{"http://:99999/", `port "99999"`},
		{"http://[::1]:0/", `port "0"`},
		{"http://bad_host!/", `host "bad_host!"`},
		{"127.0.0.1:8080", "is not an http:// or https:// URL"},
		{"ftp://x/", "is not an http:// or https:// URL"},
		{"http://", "with a host"},
		{"http:///path", "with a host"},
		{"http://x:port/", "is not an http://"},
		{"http://exa mple/", "is not an http://"},
	} {
		_, err := CheckURL(tc.url)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckURL(%q) = %v, want nil", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckURL(%q) = %v, want an error with %q", tc.url, err, tc.want)
		}
	}
}
