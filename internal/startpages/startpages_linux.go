// Package startpages gives back the memory that lfinit's own start-up
// faulted in, so that an idle init keeps only the pages it uses again.
package startpages

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Drop unmaps the pages of lfinit's own binary that starting up
// faulted in (package initialisation touches most of the Prometheus,
// protobuf and HTTP code even with metrics off, and the kernel maps 16
// pages around each fault): an idle init then keeps only what it touches
// again. The pages stay in the page cache; read-only segments only.
func Drop() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[5] != exe || (fs[1] != "r-xp" && fs[1] != "r--p") {
			continue
		}
		lo, hi, ok := strings.Cut(fs[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED)
	}
}
