package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README and the man page restate the option table (options.go); this
// test holds every copy to it, so that an option cannot be added, renamed
// or given a new default without the docs following.

const (
	readmePath = "../../README.md"
	manPath    = "../../man/lfinit.1"
)

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tableDefault is an option's default as --help shows it: "" for none
// (off, a switch, or one described in words).
func tableDefault(opt option) string {
	if d := opt.value.String(); d != "false" {
		return d
	}
	return ""
}

// tableOptions are the names of the options of the command in, in the
// table's order.
func tableOptions(in scope) []string {
	var names []string
	for _, opt := range options(&config{}) {
		if opt.in&in != 0 {
			names = append(names, opt.name)
		}
	}
	return names
}

var optionName = regexp.MustCompile(`--([a-z][a-z-]*)`)

// optionNames are the --names in s, in order.
func optionNames(s string) []string {
	var names []string
	for _, m := range optionName.FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	return names
}

// roffText is roff source as plain words: the alternating-font macros'
// arguments joined as roff joins them, other macros' names and font
// escapes dropped, hyphens plain, one space between words.
func roffText(s string) string {
	var words []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, ".") {
			macro, args, _ := strings.Cut(line[1:], " ")
			switch macro {
			case "B", "I", "SM":
				line = strings.Join(roffArgs(args), " ")
			case "BR", "BI", "IR", "RB", "RI", "IB":
				line = strings.Join(roffArgs(args), "")
			default:
				continue
			}
		}
		words = append(words, line)
	}
	text := strings.NewReplacer(`\-`, "-", `\fB`, "", `\fI`, "", `\fR`, "", `\fP`, "", `\&`, "", `\~`, " ", `\%`, "").Replace(strings.Join(words, " "))
	return strings.Join(strings.Fields(text), " ")
}

// roffArgs splits a macro's arguments, a quoted one kept whole.
func roffArgs(s string) []string {
	var args []string
	for _, m := range regexp.MustCompile(`"([^"]*)"|(\S+)`).FindAllStringSubmatch(s, -1) {
		args = append(args, m[1]+m[2])
	}
	return args
}

// section is the text of the man page's section name, up to the next.
func section(man, name string) string {
	start := strings.Index(man, "\n.SH "+name+"\n")
	if start < 0 {
		return ""
	}
	rest := man[start+len(name)+5:]
	if end := strings.Index(rest, "\n.SH "); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// The README's synopses (under ## Usage) are the ones --help derives
// from the table.
func TestReadmeSynopses(t *testing.T) {
	readme := readDoc(t, readmePath)
	_, usage, ok := strings.Cut(readme, "\n## Usage\n\n```\n")
	usage, _, closed := strings.Cut(usage, "```")
	if !ok || !closed {
		t.Fatal("README.md has no synopses under ## Usage")
	}
	for _, sc := range subcommands {
		want := sc.synopsis()
		found := false
		for _, line := range strings.Split(usage, "\n") {
			if strings.HasPrefix(line, "lfinit "+sc.name+" ") || line == "lfinit "+sc.name {
				found = true
				if line != want {
					t.Errorf("README.md synopsis of %s:\n%s\nwant (from the option table):\n%s", sc.name, line, want)
				}
			}
		}
		if !found {
			t.Errorf("README.md has no synopsis of lfinit %s", sc.name)
		}
	}
}

// The README's option table names only options of the table, each with
// the default the table gives it ("off", "none" or words when it has none).
func TestReadmeOptionTable(t *testing.T) {
	readme := readDoc(t, readmePath)
	defaults := map[string]string{}
	for _, opt := range options(&config{}) {
		defaults[opt.name] = tableDefault(opt)
	}
	head := strings.Index(readme, "| option | default | meaning |")
	if head < 0 {
		t.Fatal("README.md has no option table")
	}
	rows := 0
	for _, line := range strings.Split(readme[head:], "\n")[2:] {
		if !strings.HasPrefix(line, "| `--") {
			break
		}
		rows++
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "/"), " | ")
		if len(cells) != 3 {
			t.Errorf("README.md: row %q does not have 3 cells", line)
			continue
		}
		names := optionNames(cells[0])
		defs := strings.Split(cells[1], ", ")
		if len(defs) != len(names) && len(defs) != 1 {
			t.Errorf("README.md: row %q gives %d defaults for %d options", line, len(defs), len(names))
			continue
		}
		for i, name := range names {
			want, ok := defaults[name]
			if !ok {
				t.Errorf("README.md documents --%s, which is no option of lfinit", name)
				continue
			}
			got := defs[min(i, len(defs)-1)]
			switch {
			case want != "" && got != "`"+want+"`" && !strings.HasPrefix(got, "`"+want+"` "):
				t.Errorf("README.md: --%s defaults to %s, the option table to `%s`", name, got, want)
			case want == "" && strings.HasPrefix(got, "`"):
				t.Errorf("README.md: --%s defaults to %s, the option table to none", name, got)
			}
		}
	}
	if rows < 10 {
		t.Errorf("README.md: only %d rows in the option table; has its format changed?", rows)
	}
}

// The man page's SYNOPSIS lists, for each subcommand, exactly the options
// the table gives it, in the table's order.
func TestManSynopses(t *testing.T) {
	syn := section(readDoc(t, manPath), "SYNOPSIS")
	if syn == "" {
		t.Fatal("man/lfinit.1 has no SYNOPSIS")
	}
	for _, sc := range subcommands {
		start := strings.Index(syn, ".B lfinit "+sc.name)
		if start < 0 {
			t.Errorf("man/lfinit.1 SYNOPSIS lacks lfinit %s", sc.name)
			continue
		}
		block := syn[start:]
		if end := strings.Index(block, "\n.br\n"); end >= 0 {
			block = block[:end]
		} else if end := strings.Index(block, "\n.ad\n"); end >= 0 {
			block = block[:end]
		}
		got := optionNames(roffText(block))
		if want := tableOptions(sc.in); !slices.Equal(got, want) {
			t.Errorf("man/lfinit.1 synopsis of lfinit %s lists %v, the option table %v", sc.name, got, want)
		}
	}
}

// The man page's OPTIONS describe every option of a run and nothing else,
// each with its variable and the default the table gives it.
func TestManOptions(t *testing.T) {
	opts := section(readDoc(t, manPath), "OPTIONS")
	if opts == "" {
		t.Fatal("man/lfinit.1 has no OPTIONS")
	}
	documented := map[string]string{} // name → its paragraph as plain words
	for _, item := range strings.Split(opts, "\n.TP\n")[1:] {
		tag, _, _ := strings.Cut(item, "\n")
		names := optionNames(roffText(tag))
		if len(names) == 0 {
			t.Errorf("man/lfinit.1 OPTIONS: an item names no option: %q", tag)
			continue
		}
		documented[names[0]] = roffText(item)
	}
	table := map[string]bool{}
	for _, opt := range options(&config{}) {
		table[opt.name] = true
		if opt.in&inRun == 0 || opt.name == "h" {
			continue
		}
		text, ok := documented[opt.name]
		if !ok {
			t.Errorf("man/lfinit.1 OPTIONS lacks --%s", opt.name)
			continue
		}
		if opt.name == "help" || opt.name == "version" {
			continue
		}
		if v := "Variable " + envName(opt.name) + "."; !strings.Contains(text, v) {
			t.Errorf("man/lfinit.1: --%s does not say %q", opt.name, v)
		}
		if def := tableDefault(opt); def != "" && !regexp.MustCompile(`Default `+regexp.QuoteMeta(def)+`([^\w,]|$)`).MatchString(text) {
			t.Errorf("man/lfinit.1: --%s does not say \"Default %s\", its default in the option table:\n%s", opt.name, def, text)
		}
	}
	for name := range documented {
		if !table[name] {
			t.Errorf("man/lfinit.1 OPTIONS documents --%s, which is no option of lfinit", name)
		}
	}
}

// In --help, every option's text starts in one column, past the longest
// name: no name runs into its text.
func TestHelpNameColumn(t *testing.T) {
	var out strings.Builder
	writeHelp(&out)
	col, lines := -1, 0
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, "  --") {
			continue
		}
		lines++
		name, _, _ := strings.Cut(line[4:], " ")
		rest := line[4+len(name):]
		text := 4 + len(name) + len(rest) - len(strings.TrimLeft(rest, " "))
		if len(rest) < 2 || rest[0] != ' ' {
			t.Errorf("--help: --%s has no space before its text: %q", name, line)
		}
		if col == -1 {
			col = text
		} else if text != col {
			t.Errorf("--help: the text of --%s starts at column %d, others at %d: %q", name, text, col, line)
		}
	}
	if lines < 25 {
		t.Fatalf("only %d option lines in --help:\n%s", lines, out.String())
	}
}
