package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// allowedImports are the only packages core's code may import: pure parts
// of the standard library, and of this module the pure deadline
// arithmetic, the exit codes and the signal table. Anything that opens,
// reads or waits belongs to the loop (supervisor), not here. fmt is left
// out on purpose: its Print functions write to os.Stdout.
var allowedImports = []string{
	"errors",
	"math",
	"slices",
	"sort",
	"strconv",
	"strings",
	"syscall", // for syscall.Signal and the SIG constants only (see restrictedUses)
	"time",    // for its types and units; never the clock (see restrictedUses)
	"github.com/light-fabric/lfinit/budget",
	"github.com/light-fabric/lfinit/exitcode",
	"github.com/light-fabric/lfinit/forward",
}

// restrictedUses says, for an allowed package that also holds impure
// functions, which of its names core may use.
var restrictedUses = map[string]func(name string) bool{
	"syscall": func(name string) bool { return name == "Signal" || strings.HasPrefix(name, "SIG") },
	"time": func(name string) bool {
		switch name {
		case "Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker":
			return false // a clock read or a wait: the machine is given its instants
		}
		return true
	},
}

// TestImportsArePure holds core to allowedImports: every non-test Go file
// of the package, whatever its build constraints, is read, and any other
// import, or a clock read or syscall through an allowed one, fails.
func TestImportsArePure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range impurities(t, name, src) {
			t.Errorf("%s", p)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no Go file of core was read")
	}
}

// TestImportRuleCatchesAnImpureFile: the check itself fails a file that
// imports os, reads the clock or calls a syscall.
func TestImportRuleCatchesAnImpureFile(t *testing.T) {
	cases := map[string]string{
		"os":            "import \"os\"\nvar _ = os.Getpid",
		"clock":         "import \"time\"\nvar _ = time.Now",
		"syscall":       "import \"syscall\"\nvar _ = syscall.Kill",
		"renamed":       "import sc \"syscall\"\nvar _ = sc.Kill",
		"dot":           "import . \"time\"\nvar _ = Now",
		"other module":  "import \"github.com/light-fabric/lfinit/reaper\"\nvar _ = reaper.ExitCode",
		"cgo":           "import \"C\"",
		"golang.org/x/": "import \"golang.org/x/sys/unix\"\nvar _ = unix.Kill",
	}
	for what, body := range cases {
		if len(impurities(t, "bad.go", []byte("package core\n"+body+"\n"))) == 0 {
			t.Errorf("%s: not caught", what)
		}
	}
	if p := impurities(t, "good.go", []byte("package core\nimport (\n\"syscall\"\n\"time\"\n)\nvar _ syscall.Signal = syscall.SIGTERM\nvar _ time.Duration = time.Second\n")); len(p) != 0 {
		t.Errorf("a pure file was refused: %v", p)
	}
}

// impurities lists what breaks the rule in the Go source src of file name.
func impurities(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	local := map[string]string{} // the name a restricted package goes by in this file → its path
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(allowedImports, path) {
			found = append(found, name+": imports "+strconv.Quote(path)+", which core may not (allowedImports)")
			continue
		}
		if _, ok := restrictedUses[path]; !ok {
			continue
		}
		as := path
		if spec.Name != nil {
			as = spec.Name.Name
		}
		if as == "." || as == "_" {
			found = append(found, name+": imports "+strconv.Quote(path)+" as "+as+"; its uses could not be checked")
			continue
		}
		local[as] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if path, ok := local[pkg.Name]; ok && !restrictedUses[path](sel.Sel.Name) {
			found = append(found, fset.Position(sel.Pos()).String()+": uses "+path+"."+sel.Sel.Name+", which core may not")
		}
		return true
	})
	return found
}
