package container

import (
	"path/filepath"
	"testing"
)

// Images written for tini or dumb-init, with lfinit copied over their init
// binary: the ENTRYPOINT and the variables are left as they were.

func TestSwappedInForTini(t *testing.T) {
	needPodman(t)
	const tag = "localhost/lfinit-as-tini:test"
	if err := buildImage(filepath.Join(t.TempDir(), "tini"), tag, `FROM scratch
COPY lfinit /tini
COPY helper /
ENV LFINIT_LOG_FORMAT=json
ENTRYPOINT ["/tini", "-s", "-g", "-e", "143", "--"]
`, map[string]string{"lfinit": "lfinit", "helper": "helper"}); err != nil {
		t.Fatal(err)
	}
	c := run(t, tag, nil, "/helper", "-record", "/rec/record", "-ready-file", "/rec/ready", "-children", "2")
	c.waitFile("ready")
	podman(t, "kill", "--signal", "USR2", c.name)
	c.waitRecord("signal 12 ")
	c.waitRecord("child-signal 12 ") // -g: the group got it
	c.stop(10)
	checkExit(t, c, "graceful", 0) // -e 143: the helper's death by TERM is 0
}

func TestSwappedInForDumbInit(t *testing.T) {
	needPodman(t)
	const tag = "localhost/lfinit-as-dumb-init:test"
	if err := buildImage(filepath.Join(t.TempDir(), "dumb-init"), tag, `FROM scratch
COPY lfinit /usr/bin/dumb-init
COPY helper /
ENV LFINIT_LOG_FORMAT=json DUMB_INIT_SETSID=1
ENTRYPOINT ["/usr/bin/dumb-init", "--rewrite", "15:3", "--"]
`, map[string]string{"lfinit": "lfinit", "helper": "helper"}); err != nil {
		t.Fatal(err)
	}
	c := run(t, tag, nil, "/helper", "-record", "/rec/record", "-ready-file", "/rec/ready", "-children", "1")
	c.waitFile("ready")
	c.stop(10)
	// podman stop's TERM reaches the group as QUIT, and is still a bounded shutdown.
	checkExit(t, c, "graceful", 131)
	if !c.recorded("signal 3 ") || !c.recorded("child-signal 3 ") {
		t.Errorf("want QUIT for the helper and its child (DUMB_INIT_SETSID=1)")
	}
	if c.recorded("signal 15 ") {
		t.Errorf("the helper got TERM, want only the rewritten QUIT")
	}
}
