package main

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The page cache holds a binary as it was written: the linker writes
// through a mapping (pages of 4 KiB), a copy with one large write makes
// large folios, and a file read back from disk comes in readahead's
// blocks. A Go init's start on this kind of machine moves by milliseconds
// with it, and a machine that reclaims cold pages (DAMON) changes it
// between runs. So every Go init runs from a copy on tmpfs, which holds
// each the same way and is never reclaimed without swap: two builds are
// then compared, not how each was written.

// tmpfsDir is a new directory on tmpfs for the Go inits' copies, "" when
// /dev/shm is not tmpfs.
func tmpfsDir() string {
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		return ""
	}
	d, err := os.MkdirTemp("/dev/shm", "initbench-")
	if err != nil {
		return ""
	}
	return d
}

// placeOnTmpfs copies the binary of every Go init (lfinit, its variants,
// the floors) into dir and runs it from there.
func placeOnTmpfs(inits []initSpec, dir string) error {
	for i, in := range inits {
		if in.anchor {
			continue
		}
		b, err := os.ReadFile(in.path)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(in.path)))
		if err := os.WriteFile(p, b, 0o755); err != nil {
			return err
		}
		inits[i].argv = append([]string{p}, in.argv[1:]...)
		inits[i].path = p
	}
	return nil
}
