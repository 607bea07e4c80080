package statusfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "missing.json")
	_, err := Read(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v does not wrap ErrNotExist", err)
	}
	for _, c := range []struct {
		path string
		want []string
	}{
		{missing, []string{missing, "lfinit may not be running", "--status-file", "LFINIT_STATUS_FILE"}},
		{"", []string{"--status-file", "LFINIT_STATUS_FILE"}},
		{dir, []string{"read status file " + dir}},
		{write("empty.json", ""), []string{"empty.json", "empty document"}},
		{write("blank.json", " \n"), []string{"empty document"}},
		{write("garbage.json", "{\"version\": 1, \"phase\": "), []string{"garbage.json", "invalid JSON"}},
		{write("array.json", "[1]"), []string{"invalid JSON", "not an object"}},
		{write("null.json", "null"), []string{"invalid JSON"}},
		{write("badtype.json", `{"version": "1", "phase": "ready"}`), []string{"invalid JSON"}},
		{write("noversion.json", `{"phase": "ready"}`), []string{"not an lfinit status document", "version"}},
		{write("nophase.json", `{"version": 1}`), []string{"not an lfinit status document", "phase"}},
	} {
		_, err := Read(c.path)
		if err == nil {
			t.Errorf("Read(%q) succeeded", c.path)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Read(%q) = %q, want it to mention %q", c.path, err, w)
			}
		}
	}
}

// A newer lfinit may add keys and bump the version; an older reader still
// reads what it knows.
func TestParseNewerVersion(t *testing.T) {
	s, err := Parse([]byte(`{"version": 2, "phase": "draining", "ready": false, "pid": 1,
		"killed": 3, "new_key": {"nested": [1, 2]}, "another": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 2 || s.Phase != Draining || s.Killed != 3 || s.Pid != 1 {
		t.Errorf("parsed %+v", s)
	}
}
