package main

import "testing"

// TestPkgOf checks that symbols are counted to the package they belong to.
func TestPkgOf(t *testing.T) {
	for _, c := range []struct{ sym, pkg string }{
		{"runtime.mallocgc", "runtime"},
		{"main.run.func1", "main"},
		{"net/http.(*Transport).dialConn", "net/http"},
		{"github.com/light-fabric/lfinit/supervisor.(*Supervisor).Run.func2.1", "github.com/light-fabric/lfinit/supervisor"},
		{"github.com/prometheus/common/expfmt.MetricFamilyToOpenMetrics", "github.com/prometheus/common/expfmt"},
		{"slices.pdqsortCmpFunc[go.shape.struct { encoding/json.name string; net/http.x int }]", "slices"},
		{"sync/atomic.(*Pointer[go.shape.struct { net/http.x int }]).Load", "sync/atomic"},
		{"vendor/golang.org/x/crypto/chacha20poly1305.chacha20Poly1305Seal.abi0", "vendor/golang.org/x/crypto/chacha20poly1305"},
		{"crypto/internal/entropy/v1%2e0%2e0.Seed", "crypto/internal/entropy/v1.0.0"},
		{"gopkg.in/yaml%2ev3.(*parser).parse", "gopkg.in/yaml.v3"},
		{"type:.eq.[33]github.com/light-fabric/lfinit/forward.Entry", "github.com/light-fabric/lfinit/forward"},
		{"type:.hash.net.OpError", "net"},
		{"type:.eq.struct { *github.com/prometheus/client_golang/prometheus/promhttp.responseWriterDelegator; net/http.Pusher }", "github.com/prometheus/client_golang/prometheus/promhttp"},
		{"type:.eq.[2]interface {}", ""},
		{"go:itab.*net/http.persistConn,io.Reader", "net/http"},
		{"go:struct { *github.com/prometheus/client_golang/prometheus/promhttp.responseWriterDelegator; io.ReaderFrom }.Write", "github.com/prometheus/client_golang/prometheus/promhttp"},
		{"go:func.*", ""},
		{"aeshashbody", ""},
		{"$f64.3ff0000000000000", ""},
	} {
		if got := pkgOf(c.sym); got != c.pkg {
			t.Errorf("pkgOf(%q) = %q, want %q", c.sym, got, c.pkg)
		}
	}
}

// TestGroupOf checks the longest prefix wins and unknown paths fall back.
func TestGroupOf(t *testing.T) {
	for _, c := range []struct{ pkg, group string }{
		{"main", "lfinit (its own packages)"},
		{"runtime/pprof", "std: other"},
		{"internal/runtime/maps", "std: runtime"},
		{"net/http/internal", "std: net/http"},
		{"netip", "std: other"},
		{"github.com/cespare/xxhash/v2", "other dependencies"},
		{"", "linker tables, assembly, unnamed types (no package)"},
	} {
		if got := groupOf(c.pkg); got != c.group {
			t.Errorf("groupOf(%q) = %q, want %q", c.pkg, got, c.group)
		}
	}
}
