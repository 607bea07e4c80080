package memcg

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// Reading is what one Read saw; each Has flag says its value was read, so
// an unknown value is never mistaken for a zero.
type Reading struct {
	// OOMKills is the cgroup's oom_kill counter, valid when HasOOM.
	OOMKills uint64
	// Limit is the cgroup's own memory limit in bytes, valid when
	// HasLimit and not Unlimited.
	Limit uint64
	// Peak is the most memory the cgroup has used, in bytes, valid when
	// HasPeak.
	Peak uint64

	HasOOM   bool
	HasLimit bool
	// Unlimited, with HasLimit, says the cgroup has no limit of its own
	// ("max" on v2, the page-rounded maximum on v1).
	Unlimited bool
	HasPeak   bool
}

// unlimitedFrom is where a limit means "none": v1 shows no limit as the
// largest int64 rounded down to the page size (9223372036854771712 with
// 4 KiB pages); rounding to any page size up to 1 MiB stays above this.
const unlimitedFrom = math.MaxInt64 &^ (1<<20 - 1)

// Read reads the group's counter, limit and peak: three small files, each
// unknown when missing or not as expected. It does not fail: a reading
// with nothing known is the answer for a group it cannot read.
func (g Group) Read() Reading {
	if g.dir == "" {
		return Reading{}
	}
	var r Reading
	events, limit, peak := "memory.events", "memory.max", "memory.peak"
	if g.v1 {
		events, limit, peak = "memory.oom_control", "memory.limit_in_bytes", "memory.max_usage_in_bytes"
	}
	r.OOMKills, r.HasOOM = readKeyed(filepath.Join(g.dir, events), "oom_kill")
	r.Limit, r.Unlimited, r.HasLimit = readLimit(filepath.Join(g.dir, limit))
	r.Peak, r.HasPeak = readNumber(filepath.Join(g.dir, peak))
	return r
}

// readKeyed reads the value of key in a file of "key value" lines.
func readKeyed(path, key string) (uint64, bool) {
	data, err := readSmall(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			return parseNumber(v)
		}
	}
	return 0, false
}

// readNumber reads a file holding one number.
func readNumber(path string) (uint64, bool) {
	data, err := readSmall(path)
	if err != nil {
		return 0, false
	}
	return parseNumber(string(data))
}

// readLimit reads a limit file: a number, or "max" (v2) for none.
func readLimit(path string) (limit uint64, unlimited, ok bool) {
	data, err := readSmall(path)
	if err != nil {
		return 0, false, false
	}
	if strings.TrimSpace(string(data)) == "max" {
		return 0, true, true
	}
	n, ok := parseNumber(string(data))
	if ok && n >= unlimitedFrom {
		return 0, true, true
	}
	return n, false, ok
}

func parseNumber(s string) (uint64, bool) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, false // ParseUint's out-of-range value is no reading
	}
	return n, true
}

// OOMKilled says whether the OOM killer killed in the group between two
// readings, the first taken before the child started and the second after
// its death; known is false when either lacks the counter. The counter
// counts kills, not whom: the caller pairs it with the child's death by
// SIGKILL, since a kill of another process of the group also counts.
func OOMKilled(before, after Reading) (killed, known bool) {
	if !before.HasOOM || !after.HasOOM {
		return false, false
	}
	return after.OOMKills > before.OOMKills, true
}

// Describe says the peak and the limit in a few words for the termination
// message, e.g. "255 MiB used of a 256 MiB limit"; what is unknown is
// said so.
func (r Reading) Describe() string {
	peak := "peak use unknown"
	if r.HasPeak {
		peak = size(r.Peak) + " used"
	}
	switch {
	case !r.HasLimit:
		return peak + ", limit unknown"
	case r.Unlimited:
		return peak + ", no memory limit"
	case r.HasPeak:
		return peak + " of a " + size(r.Limit) + " limit"
	}
	return peak + ", " + size(r.Limit) + " limit"
}

// size says a size in binary units, rounded down so that a use just under
// a limit never reads as the limit: "255 MiB", "1.9 GiB", "512 B".
func size(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for n/div >= unit && exp < 4 {
		div *= unit
		exp++
	}
	name := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}[exp]
	whole, tenths := n/div, n%div*10/div
	if exp < 2 || tenths == 0 {
		return fmt.Sprintf("%d %s", whole, name)
	}
	return fmt.Sprintf("%d.%d %s", whole, tenths, name)
}
