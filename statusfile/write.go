package statusfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Marshal renders s as the status file document: indented JSON, all times in
// UTC, and a trailing newline so that `cat` leaves the prompt on its own line.
// A zero Version is filled in with Version, because a document without one is
// rejected by Parse and would make every probe fail.
func Marshal(s Status) ([]byte, error) {
	if s.Version == 0 {
		s.Version = Version
	}
	s = s.utc()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// utc returns a copy of s whose times are in UTC, as the schema promises; the
// pointers are replaced, never written through, so the caller's values stay
// untouched.
func (s Status) utc() Status {
	conv := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		u := t.UTC()
		return &u
	}
	s.StartedAt = conv(s.StartedAt)
	s.ReadyAt = conv(s.ReadyAt)
	s.SignalAt = conv(s.SignalAt)
	s.GraceDeadline = conv(s.GraceDeadline)
	s.HardDeadline = conv(s.HardDeadline)
	s.WatchdogMissedAt = conv(s.WatchdogMissedAt)
	s.PhaseSince = s.PhaseSince.UTC()
	s.UpdatedAt = s.UpdatedAt.UTC()
	return s
}

// clone returns a deep copy of s, so that a status handed to the Publisher
// cannot change under the writer goroutine if the caller reuses its pointers
// or slice.
func (s Status) clone() Status {
	c := s
	c.Outcome = copyOf(s.Outcome)
	c.ExitCode = copyOf(s.ExitCode)
	c.Reason = copyOf(s.Reason)
	c.Signal = copyOf(s.Signal)
	c.ChildPid = copyOf(s.ChildPid)
	c.RemainingSeconds = copyOf(s.RemainingSeconds)
	c.ReadyError = copyOf(s.ReadyError)
	c.ServiceState = copyOf(s.ServiceState)
	c.ServiceStatus = copyOf(s.ServiceStatus)
	c.ServiceErrno = copyOf(s.ServiceErrno)
	c.ServiceExtendSeconds = copyOf(s.ServiceExtendSeconds)
	c.ServiceBusError = copyOf(s.ServiceBusError)
	c = c.utc() // fresh time pointers
	if s.StillRunning != nil {
		c.StillRunning = append([]string(nil), s.StillRunning...)
	}
	return c
}

// copyOf is a new pointer to a copy of *p, or nil.
func copyOf[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// WriteAtomic replaces the file at path with s. It writes a temporary file in
// the same directory (rename is only atomic within one file system), fsyncs
// it and renames it over path, so a concurrent reader sees either the old
// document or the new one, never a torn, empty or partial one. On failure the
// temporary file is removed and the error names the step and the path.
func WriteAtomic(path string, s Status) (err error) {
	if path == "" {
		return errors.New("status file: empty path")
	}
	b, err := Marshal(s)
	if err != nil {
		return fmt.Errorf("status file %s: marshal: %w", path, err)
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("status file %s: create temporary file in %s: %w", path, dir, err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				_ = f.Close()
			}
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(b); err != nil {
		return fmt.Errorf("status file %s: write %s: %w", path, tmp, err)
	}
	// CreateTemp makes the file 0600; probes may run as another user, so
	// the status must be world-readable. Done before fsync so the mode is
	// durable together with the data.
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("status file %s: chmod %s: %w", path, tmp, err)
	}
	// Without fsync a crash after the rename could leave a renamed but empty
	// file, exactly the partial document rename is meant to rule out.
	if err = f.Sync(); err != nil {
		return fmt.Errorf("status file %s: fsync %s: %w", path, tmp, err)
	}
	closed = true
	if err = f.Close(); err != nil {
		return fmt.Errorf("status file %s: close %s: %w", path, tmp, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("status file %s: rename %s over it: %w", path, tmp, err)
	}
	// Best effort: persist the rename itself. Readers already see the new
	// document; only crash durability depends on this, so its error is not
	// worth failing the write for.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// Prepare checks at startup, before the child exists, that a status file can
// be written at path, so that a bad --status-file is a usage error (exit 2)
// rather than a silent gap in the published state later. It creates the
// parent directory if missing and writes a first "starting" status.
func Prepare(path string) error {
	if path == "" {
		return errors.New("status file: empty path (choose a file path with --status-file)")
	}
	if os.IsPathSeparator(path[len(path)-1]) {
		// MkdirAll would otherwise create the "file" as a directory.
		return fmt.Errorf("status file %s: ends in a separator; name a file (choose a file path with --status-file)", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return &prepareError{
			msg: fmt.Sprintf("status file %s: %s is a directory (choose a file path with --status-file)", path, path),
			err: syscall.EISDIR,
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return prepareFailure(path, dir, err)
	}
	now := time.Now().UTC()
	s := Status{Version: Version, Phase: Starting, Pid: os.Getpid(), UpdatedAt: now, PhaseSince: now}
	s.stampOwner()
	if err := WriteAtomic(path, s); err != nil {
		return prepareFailure(path, dir, err)
	}
	return nil
}

// prepareError carries an operator-facing message while keeping the cause
// reachable with errors.Is / errors.As.
type prepareError struct {
	msg string
	err error
}

func (e *prepareError) Error() string { return e.msg }
func (e *prepareError) Unwrap() error { return e.err }

// prepareFailure turns err, from creating dir or writing path, into a message
// that says what is wrong with the path and what to do about it.
func prepareFailure(path, dir string, err error) error {
	const fix = "choose a writable path with --status-file"
	var msg string
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		msg = fmt.Sprintf("status file %s: %s is not a directory (%s)", path, firstNonDir(dir), fix)
	case errors.Is(err, syscall.EISDIR):
		msg = fmt.Sprintf("status file %s: %s is a directory (choose a file path with --status-file)", path, path)
	case errors.Is(err, syscall.EROFS):
		msg = fmt.Sprintf("status file %s: directory %s is read-only (%s)", path, nearestExisting(dir), fix)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		msg = fmt.Sprintf("status file %s: directory %s is not writable by uid %d (%s, or make it writable)",
			path, nearestExisting(dir), os.Geteuid(), fix)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		msg = fmt.Sprintf("status file %s: no space left in %s (%s, or free some space)", path, nearestExisting(dir), fix)
	case errors.Is(err, syscall.ENOENT):
		msg = fmt.Sprintf("status file %s: directory %s does not exist and could not be created (%s)", path, dir, fix)
	default:
		msg = fmt.Sprintf("status file %s: %v (%s)", path, RootCause(err), fix)
	}
	return &prepareError{msg: msg, err: err}
}

// firstNonDir returns the ancestor of dir (or dir) that exists but is not a
// directory: the regular file standing in the path, which is what the operator
// has to fix. It falls back to dir.
func firstNonDir(dir string) string {
	var chain []string // dir and its ancestors, deepest first
	for d := dir; ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		fi, err := os.Stat(chain[i])
		if err != nil {
			break
		}
		if !fi.IsDir() {
			return chain[i]
		}
	}
	return dir
}

// nearestExisting returns dir or its closest existing ancestor: the directory
// in which creation actually failed when MkdirAll could not make dir.
func nearestExisting(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// RootCause returns the errno (or innermost error) of err, so that a
// failure reads "input/output error" rather than repeating the path twice.
func RootCause(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// The failure kinds reported by Publisher's onError.
const (
	KindReadOnly = "read-only" // EROFS, EACCES, EPERM
	KindNoSpace  = "no-space"  // ENOSPC, EDQUOT
	KindMissing  = "missing"   // ENOENT, ENOTDIR: the directory went away
	KindOther    = "other"     // anything else, e.g. EIO
)

// classify maps a write error to one of the failure kinds, so repeated
// failures of one cause are reported once instead of at every transition.
func classify(err error) string {
	switch {
	case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return KindReadOnly
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return KindNoSpace
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		return KindMissing
	default:
		return KindOther
	}
}

// Publisher writes statuses to the status file from its own goroutine, so
// that the caller (PID 1's signal and deadline loop) never waits on the disk:
// a hung or slow file system must not delay a forward or a kill.
type Publisher struct {
	path    string
	onError func(kind string, err error)
	// write is WriteAtomic, replaceable by tests to simulate a slow or
	// failing disk.
	write func(string, Status) error

	mu      sync.Mutex
	pending *Status // the one-slot mailbox; newest wins
	closed  bool
	started bool

	wake chan struct{} // capacity 1: "the mailbox may be non-empty"
	done chan struct{} // closed when the writer goroutine has exited

	lastErr  error // last write's result; read only after done is closed
	writes   atomic.Int64
	failures atomic.Int64
}

// NewPublisher returns a Publisher writing to path; onError, if not nil, is
// called from the writer goroutine once per failure kind until a write
// succeeds again.
func NewPublisher(path string, onError func(kind string, err error)) *Publisher {
	return &Publisher{
		path:    path,
		onError: onError,
		write:   WriteAtomic,
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
}

// Publish hands s to the writer and returns at once, never waiting on I/O; if
// a status is still pending it is replaced, since only the newest matters.
// Publish after Close is ignored.
func (p *Publisher) Publish(s Status) {
	c := s.clone()
	c.stampOwner()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.pending = &c
	if !p.started {
		// Started lazily so that tests can replace write first, and so
		// that a Publisher never used costs no goroutine.
		p.started = true
		go p.run()
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default: // a wake-up is already pending; the writer will see c
	}
}

// run is the single writer goroutine. The mutex is held only to swap the
// mailbox, never across a write, which is what keeps Publish non-blocking.
func (p *Publisher) run() {
	defer close(p.done)
	reported := map[string]bool{}
	for {
		p.mu.Lock()
		s, closed := p.pending, p.closed
		p.pending = nil
		p.mu.Unlock()
		if s == nil {
			if closed {
				return
			}
			<-p.wake
			continue
		}
		err := p.write(p.path, *s)
		p.lastErr = err
		if err == nil {
			p.writes.Add(1)
			clear(reported)
			continue
		}
		p.failures.Add(1)
		kind := classify(err)
		if !reported[kind] {
			reported[kind] = true
			if p.onError != nil {
				p.onError(kind, err)
			}
		}
	}
}

// Close stops accepting statuses and waits up to timeout for the last
// published one to be written; it reports whether it was (true if nothing was
// ever published). On timeout the writer is left behind: the process is about
// to exit, and waiting longer on a hung disk would only delay that.
func (p *Publisher) Close(timeout time.Duration) bool {
	p.mu.Lock()
	p.closed = true
	started := p.started
	p.mu.Unlock()
	if !started {
		return true
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return p.lastErr == nil
	case <-t.C:
		// The writer may have finished at the same instant.
		select {
		case <-p.done:
			return p.lastErr == nil
		default:
			return false
		}
	}
}

// Writes returns the number of statuses written successfully.
func (p *Publisher) Writes() int64 { return p.writes.Load() }

// Failures returns the number of writes that failed.
func (p *Publisher) Failures() int64 { return p.failures.Load() }
