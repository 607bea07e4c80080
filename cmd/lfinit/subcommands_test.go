package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/statusfile"
)

// writeStatusFile writes a status file that says ready, written by this
// process; with a start time that is not this process's, its writer is
// gone (as after a pid is recycled) and the file is stale.
func writeStatusFile(t *testing.T, stale bool) string {
	t.Helper()
	s := statusfile.Status{Version: statusfile.Version, Phase: statusfile.Ready, Ready: true, Pid: os.Getpid(), UpdatedAt: time.Now()}
	if stale {
		ns, _ := os.Readlink("/proc/self/ns/pid")
		ticks := uint64(1) // this process did not start one clock tick after boot
		s.PidNamespace, s.PidStartTicks = &ns, &ticks
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "status.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// statusJSON runs lfinit status --json on path and decodes what it prints.
func statusJSON(t *testing.T, path string) (int, map[string]any) {
	t.Helper()
	var out, errOut strings.Builder
	code := runSubcommand("status", []string{"--json", "--status-file", path}, noEnv, &out, &errOut)
	var got map[string]any
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
		t.Fatalf("status --json printed no JSON: %v\n%s%s", err, out.String(), errOut.String())
	}
	return code, got
}

// A stale file is marked in both outputs, which agree: stale, not ready,
// its last phase kept, exit 1.
func TestStatusOfAStaleFile(t *testing.T) {
	path := writeStatusFile(t, true)
	code, got := statusJSON(t, path)
	reason, _ := got["stale_reason"].(string)
	if code != 1 || got["stale"] != true || got["ready"] != false || got["phase"] != "ready" || !strings.Contains(reason, "is gone") {
		t.Errorf("status --json of a stale file: exit %d, %v", code, got)
	}
	var out, errOut strings.Builder
	code = runSubcommand("status", []string{"--status-file", path}, noEnv, &out, &errOut)
	if code != 1 || !strings.HasPrefix(out.String(), "STALE:") || !strings.Contains(out.String(), "ready:      false\n") {
		t.Errorf("status of a stale file: exit %d\n%s", code, out.String())
	}
}

// A live file is printed as it is, with "stale": false and no reason.
func TestStatusOfALiveFile(t *testing.T) {
	code, got := statusJSON(t, writeStatusFile(t, false))
	if _, ok := got["stale_reason"]; code != 0 || got["stale"] != false || got["ready"] != true || ok {
		t.Errorf("status --json of a live file: exit %d, %v", code, got)
	}
}

// A subcommand's synopsis is derived from the option table: its options
// are the table's rows that name it, in the table's order.
func TestSubcommandSynopsisFromTable(t *testing.T) {
	for name, want := range map[string]string{
		"status":  "lfinit status [--status-file PATH] [--json]",
		"probe":   "lfinit probe ready|live [--status-file PATH]",
		"budget":  "lfinit budget [--grace D] [--floor D] [--drain-delay D] [--on-shutdown CMD] [--on-shutdown-timeout D] [--stop-timeout D] [--allowance D] [--push-gateway URL] [--push-timeout D]",
		"version": "lfinit version [--json]",
	} {
		sc, ok := lookupSubcommand(name)
		if got := sc.synopsis(); !ok || got != want {
			t.Errorf("%s: synopsis %q, want %q", name, got, want)
		}
	}
}
