package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// reuseScript runs as PID 1 of a fresh PID namespace, with lfinit as an
// ordinary process (subreaper mode) inside it. It lets lfinit's child exit
// while a stubborn setsid'd daemon it left keeps lfinit cleaning up (the
// daemon has a group of its own: while any process is in the child's
// group, the kernel keeps its id, and so the child's pid, from reuse).
// Once the child's pid is free, the kernel hands exactly that pid (via
// ns_last_pid) to an outsider in a session and process group of its own:
// the pid and process-group id lfinit used to signal. While the outsider
// lives, lfinit gets a relayable signal and then reaches its SIGKILL
// deadline. The outsider must receive nothing.
const reuseScript = `
set -u
DIR=$1 LFINIT=$2 HELPER=$3
for attempt in 1 2 3 4 5; do
	rm -f $DIR/*.pid $DIR/*.rec
	$LFINIT --floor 1500ms --forward-to group -- $HELPER -record $DIR/child.rec -pidfile $DIR/child.pid \
		-daemon $DIR/daemon.pid -daemon-ignore-term -exit 0 -after 200ms 2>>$DIR/lfinit.log &
	LF=$!
	while [ ! -s $DIR/child.pid ]; do sleep 0.01; done
	CHILD=$(cat $DIR/child.pid)
	while [ -e /proc/$CHILD ]; do sleep 0.01; done
	echo $((CHILD - 1)) > /proc/sys/kernel/ns_last_pid
	$HELPER -setsid -record $DIR/outsider.rec -pidfile $DIR/outsider.pid -die-on "" &
	while [ ! -s $DIR/outsider.pid ]; do sleep 0.01; done
	OUT=$(cat $DIR/outsider.pid)
	if [ "$OUT" != "$CHILD" ]; then
		echo "attempt $attempt: outsider got pid $OUT, not $CHILD" >&2
		kill -9 $OUT; wait $LF; sleep 0.05; continue
	fi
	kill -USR1 $LF
	wait $LF
	echo "lfinit-exit=$?"
	sleep 0.1
	if kill -0 $OUT 2>/dev/null; then echo outsider-alive; fi
	echo "outsider-pid=$OUT child-pid=$CHILD"
	kill -9 $OUT
	exit 0
done
echo "could not arrange pid reuse" >&2
exit 1
`

func TestRecycledChildPidIsNeverSignalled(t *testing.T) {
	long(t)
	t.Parallel()
	needRoot(t)
	dir := t.TempDir()
	cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "bash", "-c", reuseScript, "bash", dir, lfinitBin, helperBin)
	cmd.Env = append(os.Environ(), "LFINIT_LOG_LEVEL=debug") // the relay's line is at debug
	out, err := cmd.CombinedOutput()
	log, _ := os.ReadFile(dir + "/lfinit.log")
	if err != nil {
		t.Fatalf("%v\n%s\nlfinit log:\n%s", err, out, log)
	}
	if !strings.Contains(string(out), "lfinit-exit=0") || !strings.Contains(string(out), "outsider-alive") {
		t.Fatalf("want lfinit to exit 0 and the outsider alive:\n%s\nlfinit log:\n%s", out, log)
	}
	rec, _ := os.ReadFile(dir + "/outsider.rec")
	if strings.Contains(string(rec), "signal") {
		t.Fatalf("the outsider holding the child's old pid was signalled:\n%s\nlfinit log:\n%s", rec, log)
	}
	if !strings.Contains(string(log), "hard deadline: killed the process tree") || !strings.Contains(string(log), "signal=SIGUSR1 action=\"dropped") {
		t.Fatalf("the test did not exercise the kill and the relay paths:\n%s", log)
	}
	t.Logf("%s", out)
}
