package statusfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Read reads and parses the status file at path. Its errors are meant for the
// `lfinit status` and `lfinit probe` subcommands, which print them as is.
func Read(path string) (Status, error) {
	if path == "" {
		return Status{}, errors.New("no status file configured (set --status-file or LFINIT_STATUS_FILE to the path the running lfinit uses)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Status{}, fmt.Errorf("status file %s does not exist: lfinit may not be running, or its --status-file/LFINIT_STATUS_FILE differs from this one: %w", path, err)
		}
		return Status{}, fmt.Errorf("read status file %s: %w", path, err)
	}
	s, err := Parse(b)
	if err != nil {
		return Status{}, fmt.Errorf("status file %s: %w", path, err)
	}
	return s, nil
}

// Parse decodes a status file document. A document from a newer lfinit (a
// higher version) is accepted and its unknown keys ignored, because keys are
// only ever added: a newer writer must not break an older probe.
func Parse(b []byte) (Status, error) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return Status{}, errors.New("empty document (was it truncated by something other than lfinit?)")
	}
	if t[0] != '{' {
		return Status{}, errors.New("invalid JSON: not an object")
	}
	var s Status
	if err := json.Unmarshal(t, &s); err != nil {
		return Status{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if s.Version < 1 {
		return Status{}, fmt.Errorf("not an lfinit status document: \"version\" is missing or invalid (%d)", s.Version)
	}
	if s.Phase == "" {
		return Status{}, errors.New("not an lfinit status document: no \"phase\" key")
	}
	return s, nil
}
