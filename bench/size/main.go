// Command size measures what each package and dependency costs in lfinit's
// static binary. It builds lfinit as scripts/build does (the stripped size,
// against the 9 MiB budget) and once more with the same flags but without
// -s -w, attributes every sized symbol of `go tool nm -size` to its package,
// groups the packages by module and by part of the standard library, and
// writes a Markdown report.
//
//	go run ./bench/size -o bench/SIZE.md
package main

import (
	"bytes"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// budget is the stripped binary's size limit in bytes (9 MiB).
const budget = 9 << 20

// sym is one symbol of the unstripped binary.
type sym struct {
	addr, size uint64
	name       string
}

// row is a package or group with the bytes attributed to it.
type row struct {
	name, group string
	bytes       uint64
	syms        int
}

func main() {
	out := flag.String("o", "", "write the report to this file (default stdout)")
	top := flag.Int("top", 30, "packages in the second table")
	flag.Parse()
	if err := run(*out, *top); err != nil {
		fmt.Fprintln(os.Stderr, "size:", err)
		os.Exit(1)
	}
}

// run builds both binaries, measures them and writes the report.
func run(out string, top int) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "lfinit-size")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	stripped, full := filepath.Join(dir, "lfinit"), filepath.Join(dir, "lfinit-symbols")
	if err := command(root, "scripts/build", stripped); err != nil {
		return err
	}
	// scripts/build's go build flags (keep in step), without -s -w and the version stamps.
	if err := command(root, "go", "build", "-trimpath", "-tags", "nethttpomithttp2",
		"-gcflags=google.golang.org/protobuf/...=-l", "-o", full, "./cmd/lfinit"); err != nil {
		return err
	}
	nm, err := exec.Command("go", "tool", "nm", "-size", "-sort", "size", full).Output()
	if err != nil {
		return fmt.Errorf("go tool nm: %w", err)
	}
	syms, err := parseNM(nm)
	if err != nil {
		return err
	}
	env, err := exec.Command("go", "env", "GOVERSION", "GOOS", "GOARCH").Output()
	if err != nil || len(strings.Fields(string(env))) != 3 {
		return fmt.Errorf("go env: %q, %v", env, err)
	}
	f := strings.Fields(string(env))
	var b bytes.Buffer
	if err := report(&b, f[0]+" "+f[1]+"/"+f[2], stripped, full, syms, top); err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(b.Bytes())
		return err
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}

// moduleRoot returns the directory of lfinit's go.mod.
func moduleRoot() (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(gomod)), "go.mod") {
		return "", fmt.Errorf("not inside lfinit's module (go env GOMOD: %q, %v)", gomod, err)
	}
	return filepath.Dir(strings.TrimSpace(string(gomod))), nil
}

// command runs a build step in the module root, static (CGO_ENABLED=0).
func command(dir, name string, args ...string) error {
	c := exec.Command(name, args...)
	c.Dir, c.Stdout, c.Stderr = dir, os.Stderr, os.Stderr
	c.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// parseNM reads `go tool nm -size` lines: address, size, type, name.
func parseNM(out []byte) ([]sym, error) {
	var syms []sym
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue // blank, or an undefined symbol without an address
		}
		addr, err1 := strconv.ParseUint(f[0], 16, 64)
		size, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("go tool nm: unexpected line %q", line)
		}
		name := strings.TrimSpace(line)
		for range 3 {
			name = strings.TrimSpace(name[strings.IndexByte(name, ' '):])
		}
		syms = append(syms, sym{addr, size, name})
	}
	return syms, nil
}

// pkgOf returns the import path of a symbol's package, or "" for linker tables, assembly and unnamed types.
func pkgOf(name string) string {
	switch {
	case strings.HasPrefix(name, "go:itab."):
		return typePkg(name[len("go:itab."):]) // the concrete type, before the comma
	case strings.HasPrefix(name, "go:struct {"), strings.HasPrefix(name, "go:(*struct {"):
		return typePkg(name[len("go:"):]) // wrappers of embedded fields' methods
	case strings.HasPrefix(name, "go:"), strings.HasPrefix(name, "$"), strings.HasPrefix(name, "go."):
		return "" // linker tables, floating-point constants ($f64.3ff0...)
	case strings.HasPrefix(name, "type:"):
		return typePkg(name[len("type:"):])
	}
	return plainPkg(name)
}

// plainPkg returns the package of pkg.F, pkg.(*T).M, pkg.F.func1, pkg.F[shape] or pkg.V, or "" when there is none.
func plainPkg(name string) string {
	if i := strings.IndexAny(name, "[( "); i >= 0 {
		name = name[:i]
	}
	slash := strings.LastIndexByte(name, '/') + 1
	dot := strings.IndexByte(name[slash:], '.')
	if dot <= 0 {
		return ""
	}
	path := name[:slash+dot]
	if p, err := url.PathUnescape(path); err == nil { // the linker writes the last element's dots as %2e
		path = p
	}
	return path
}

// typePkg returns the package of the first named type in a type expression such as [8]pkg.T or struct { *pkg.T }, or "".
func typePkg(expr string) string {
	tokens := strings.FieldsFunc(expr, func(r rune) bool {
		return !(r == '.' || r == '/' || r == '%' || r == '-' || r == '_' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r > 0x7f)
	})
	for _, t := range tokens {
		t = strings.TrimLeft(t, ".") // .eq., .hash.
		for _, op := range []string{"eq.", "hash.", "gcmask.", "namedata."} {
			t = strings.TrimPrefix(t, op)
		}
		if strings.HasPrefix(t, "go.shape") {
			continue
		}
		if p := plainPkg(t); p != "" {
			return p
		}
	}
	return ""
}

// groups maps import path prefixes to the group a package is counted in; the longest match wins.
var groups = []struct{ prefix, group string }{
	{"main", "lfinit (its own packages)"},
	{"github.com/light-fabric/lfinit", "lfinit (its own packages)"},
	{"golang.org/x/sys", "golang.org/x/sys"},
	{"github.com/prometheus/client_golang", "github.com/prometheus/client_golang"},
	{"github.com/prometheus/client_model", "github.com/prometheus/client_model"},
	{"github.com/prometheus/common", "github.com/prometheus/common"},
	{"github.com/prometheus/procfs", "github.com/prometheus/procfs"},
	{"google.golang.org/protobuf", "google.golang.org/protobuf"},
	{"runtime", "std: runtime"},
	{"internal/runtime", "std: runtime"},
	{"internal/abi", "std: runtime"},
	{"internal/bytealg", "std: runtime"},
	{"internal/cpu", "std: runtime"},
	{"internal/chacha8rand", "std: runtime"},
	{"runtime/pprof", "std: other"},
	{"net/http", "std: net/http"},
	{"vendor/golang.org/x/net/http", "std: net/http"},
	{"net", "std: net, net/url, mime, x/net"},
	{"mime", "std: net, net/url, mime, x/net"},
	{"vendor/golang.org/x/net", "std: net, net/url, mime, x/net"},
	{"crypto", "std: crypto/* (TLS, x509, FIPS module)"},
	{"vendor/golang.org/x/crypto", "std: crypto/* (TLS, x509, FIPS module)"},
	{"encoding", "std: encoding/*, compress/*, hash/*"},
	{"compress", "std: encoding/*, compress/*, hash/*"},
	{"hash", "std: encoding/*, compress/*, hash/*"},
	{"reflect", "std: reflect"},
	{"internal/reflectlite", "std: reflect"},
	{"fmt", "std: fmt, strconv, strings, unicode, regexp, x/text"},
	{"strconv", "std: fmt, strconv, strings, unicode, regexp, x/text"},
	{"internal/strconv", "std: fmt, strconv, strings, unicode, regexp, x/text"},
	{"strings", "std: fmt, strconv, strings, unicode, regexp, x/text"},
	{"bytes", "std: fmt, strconv, strings, unicode, regexp, x/text"},
	{"unicode", "std: fmt, strconv, strings, unicode, regexp, x/text"},
	{"regexp", "std: fmt, strconv, strings, unicode, regexp, x/text"},
	{"text", "std: fmt, strconv, strings, unicode, regexp, x/text"},
	{"vendor/golang.org/x/text", "std: fmt, strconv, strings, unicode, regexp, x/text"},
	{"time", "std: time"},
	{"os", "std: os, syscall, sync, io, internal/poll"},
	{"syscall", "std: os, syscall, sync, io, internal/poll"},
	{"internal/syscall", "std: os, syscall, sync, io, internal/poll"},
	{"internal/poll", "std: os, syscall, sync, io, internal/poll"},
	{"sync", "std: os, syscall, sync, io, internal/poll"},
	{"internal/sync", "std: os, syscall, sync, io, internal/poll"},
	{"io", "std: os, syscall, sync, io, internal/poll"},
}

// groupOf returns the group of a package path ("" for symbols without one).
func groupOf(pkg string) string {
	if pkg == "" {
		return "linker tables, assembly, unnamed types (no package)"
	}
	best, group := -1, ""
	for _, g := range groups {
		if (pkg == g.prefix || strings.HasPrefix(pkg, g.prefix+"/")) && len(g.prefix) > best {
			best, group = len(g.prefix), g.group
		}
	}
	switch {
	case group != "":
		return group
	case strings.Contains(strings.SplitN(pkg, "/", 2)[0], ".") && !strings.HasPrefix(pkg, "vendor/"):
		return "other dependencies"
	}
	return "std: other"
}

// fileSections returns the allocated sections of an ELF binary.
func fileSections(path string) ([]*elf.Section, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var s []*elf.Section
	for _, sec := range f.Sections {
		if sec.Flags&elf.SHF_ALLOC != 0 {
			s = append(s, sec)
		}
	}
	return s, nil
}

// textSize returns the size of the .text section, or 0.
func textSize(secs []*elf.Section) uint64 {
	for _, s := range secs {
		if s.Name == ".text" {
			return s.Size
		}
	}
	return 0
}

// sectionOf returns the allocated section holding an address, or nil.
func sectionOf(secs []*elf.Section, addr uint64) *elf.Section {
	for _, s := range secs {
		if s.Addr <= addr && addr < s.Addr+s.Size {
			return s
		}
	}
	return nil
}

// sorted returns the rows of m, largest first.
func sorted(m map[string]*row) []*row {
	var rows []*row
	for _, r := range m {
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].bytes != rows[j].bytes {
			return rows[i].bytes > rows[j].bytes
		}
		return rows[i].name < rows[j].name
	})
	return rows
}

// tally is the symbols' bytes counted by package, group and section.
type tally struct {
	pkgs, groups map[string]*row
	inSection    map[string]uint64
	total, bss   uint64 // in the file; zero-filled, not in it
	bssBiggest   sym
	noPkg        []sym // largest first
}

// count attributes the symbols in the file's sections to packages and groups.
func count(syms []sym, secs []*elf.Section) *tally {
	t := &tally{pkgs: map[string]*row{}, groups: map[string]*row{}, inSection: map[string]uint64{}}
	for _, s := range syms {
		sec := sectionOf(secs, s.addr)
		if sec != nil && sec.Type == elf.SHT_NOBITS { // zero-filled at start: not in the file
			t.bss += s.size
			if s.size > t.bssBiggest.size {
				t.bssBiggest = s
			}
			continue
		}
		if sec != nil {
			t.inSection[sec.Name] += s.size
		}
		t.total += s.size
		p := pkgOf(s.name)
		if p == "" {
			t.noPkg = append(t.noPkg, s)
		}
		g := groupOf(p)
		if t.pkgs[p] == nil {
			t.pkgs[p] = &row{name: p, group: g}
		}
		if t.groups[g] == nil {
			t.groups[g] = &row{name: g}
		}
		t.pkgs[p].bytes += s.size
		t.pkgs[p].syms++
		t.groups[g].bytes += s.size
		t.groups[g].syms++
	}
	sort.Slice(t.noPkg, func(i, j int) bool { return t.noPkg[i].size > t.noPkg[j].size })
	return t
}

// report writes the Markdown report.
func report(w io.Writer, goVersion, stripped, full string, syms []sym, top int) error {
	st, err := os.Stat(stripped)
	if err != nil {
		return err
	}
	strippedSecs, err := fileSections(stripped)
	if err != nil {
		return err
	}
	fullSecs, err := fileSections(full)
	if err != nil {
		return err
	}
	t := count(syms, fullSecs)
	size := uint64(st.Size())
	pct := func(n uint64) string { return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(t.total)) }

	fmt.Fprintf(w, "# lfinit's binary size by package\n\n")
	fmt.Fprintf(w, "`%s`, %s, %s.\n\n", strings.Join(append([]string{"go run ./bench/size"}, os.Args[1:]...), " "),
		time.Now().UTC().Format("2006-01-02"), goVersion)
	room := "left under"
	if size > budget {
		room = "OVER"
	}
	fmt.Fprintf(w, "The static, stripped binary as `scripts/build` makes it: **%s bytes** (%.2f MiB), %s bytes %s the 9 MiB budget (%s).\n\n",
		comma(size), float64(size)/(1<<20), comma(absDiff(budget, size)), room, comma(budget))
	fmt.Fprintf(w, "Below, each symbol's size from `go tool nm -size` on the same build without `-s -w` is counted to its package. "+
		"Symbols total **%s bytes** beside the file's %s: headers, most of .gopclntab (function names and pc-value tables, which grow with each package's code), string data and type descriptors without a sized symbol, and alignment belong to no symbol. "+
		"Zero-filled (.bss, .noptrbss) symbols take no room in the file and are left out (%s bytes, mostly %s at %s bytes).\n\n",
		comma(t.total), comma(size), comma(t.bss), t.bssBiggest.name, comma(t.bssBiggest.size))

	fmt.Fprintf(w, "| section of the stripped file | bytes | of which in sized symbols |\n|---|---:|---:|\n")
	for _, s := range strippedSecs {
		if s.Type == elf.SHT_NOBITS || s.Size < 1024 {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", s.Name, comma(s.Size), comma(t.inSection[s.Name]))
	}
	if a, b := textSize(fullSecs), textSize(strippedSecs); a != b {
		fmt.Fprintf(w, "\n**.text differs between the two builds (%s, %s bytes): bench/size's go build flags are out of step with scripts/build.**\n",
			comma(a), comma(b))
	}

	fmt.Fprintf(w, "\n## By group\n\n| group | bytes | of symbols | symbols |\n|---|---:|---:|---:|\n")
	for _, r := range sorted(t.groups) {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.name, comma(r.bytes), pct(r.bytes), comma(uint64(r.syms)))
	}
	var largest []string
	for _, s := range t.noPkg[:min(3, len(t.noPkg))] {
		largest = append(largest, fmt.Sprintf("`%s` %s", s.name, comma(s.size)))
	}
	fmt.Fprintf(w, "\nThe largest symbols without a package: %s (`go:func.*` is the function metadata of every package's code).\n", strings.Join(largest, ", "))

	fmt.Fprintf(w, "\n## The %d largest packages\n\n| package | group | bytes | of symbols | symbols |\n|---|---|---:|---:|---:|\n", top)
	for _, r := range sorted(t.pkgs)[:min(top, len(t.pkgs))] {
		name := "`" + r.name + "`"
		if r.name == "" {
			name = "(no package)"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", name, r.group, comma(r.bytes), pct(r.bytes), comma(uint64(r.syms)))
	}
	return nil
}

// absDiff returns |a-b|.
func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// comma formats n with thousands separators.
func comma(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
