// Command tinyutils stands in for /bin/true and /bin/sleep in the FROM
// scratch test image, chosen by the name it is run as: test/helper's
// -orphans starts those two programs, and a scratch image has no coreutils.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

func main() {
	switch name := filepath.Base(os.Args[0]); name {
	case "true":
		os.Exit(0)
	case "sleep":
		if len(os.Args) != 2 {
			fmt.Fprintln(os.Stderr, "usage: sleep SECONDS")
			os.Exit(2)
		}
		s, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil || s < 0 {
			fmt.Fprintf(os.Stderr, "sleep: bad duration %q\n", os.Args[1])
			os.Exit(2)
		}
		time.Sleep(time.Duration(s * float64(time.Second)))
	default:
		fmt.Fprintf(os.Stderr, "tinyutils: run me as true or sleep, not %q\n", name)
		os.Exit(2)
	}
}
