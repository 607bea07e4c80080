// Package netaddr checks the addresses and URLs of lfinit's options against
// what can ever work (a port from 1 to 65535, a host that parses), so that a
// typo is refused at start instead of found by a probe that never passes or a
// push that fails at exit.
package netaddr

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Use is what an address is for, which decides whether port 0 is allowed.
type Use int

const (
	// Connect is an address to connect to: port 1 to 65535.
	Connect Use = iota
	// Listen is an address to listen on: port 0 lets the kernel pick one.
	Listen
)

// CheckHostPort checks a HOST:PORT address. An empty host is this host.
func CheckHostPort(addr string, use Use) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT", addr)
	}
	if err := CheckPort(port, use); err != nil {
		return err
	}
	return CheckHost(host)
}

// CheckPort checks a port written as a number. A service name ("http") is
// refused: it would be looked up in /etc/services, which a scratch image may
// not have, and a failed lookup reads like a DNS error.
func CheckPort(port string, use Use) error {
	low := 1
	if use == Listen {
		low = 0
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || int(n) < low {
		return fmt.Errorf("port %q is not a number from %d to 65535", port, low)
	}
	return nil
}

// CheckHost checks that host is an IP address (IPv6 with an optional zone)
// or a DNS name; empty is this host.
func CheckHost(host string) error {
	if host == "" || isDomainName(host) {
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	return fmt.Errorf("host %q is not an IP address or a DNS name", host)
}

// CheckURL checks an http:// or https:// URL with a host, and its port
// when it names one; it returns the parsed URL.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http:// or https:// URL with a host", raw)
	}
	if port := u.Port(); port != "" {
		if err := CheckPort(port, Connect); err != nil {
			return nil, err
		}
	}
	return u, CheckHost(u.Hostname())
}

// isDomainName reports whether s is a syntactically valid DNS name, as Go's
// resolver judges one (labels of letters, digits, _ and -, not starting or
// ending with -, at most 63 bytes; 253 in all; not all digits).
func isDomainName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	nonNumeric := false
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			switch {
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_', c == '-':
				nonNumeric = true
			case '0' <= c && c <= '9':
			default:
				return false
			}
		}
	}
	return nonNumeric
}
