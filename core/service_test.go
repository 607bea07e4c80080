package core

import "testing"

func TestServiceGate(t *testing.T) {
	s := NewService(true)
	if s.GateOpen() || s.Unready() || s.State() != ServiceStarting {
		t.Fatalf("fresh: %+v", s)
	}
	if !s.Heard(true, false, false) || !s.GateOpen() || s.State() != ServiceReady {
		t.Fatalf("after READY=1: %+v", s)
	}
	if s.Heard(true, false, false) {
		t.Fatal("a second READY=1 changed the state")
	}
	if !s.Heard(false, true, false) || s.GateOpen() || !s.Unready() || s.State() != ServiceReloading {
		t.Fatalf("after RELOADING=1: %+v", s)
	}
	if !s.Heard(true, false, false) || !s.GateOpen() || s.Unready() {
		t.Fatalf("READY=1 after the reload: %+v", s)
	}
	if !s.Heard(false, false, true) || s.GateOpen() || !s.Unready() || s.State() != ServiceStopping {
		t.Fatalf("after STOPPING=1: %+v", s)
	}
	if s.Heard(true, false, false) || !s.Unready() {
		t.Fatalf("READY=1 after STOPPING=1 made it ready again: %+v", s)
	}
}

func TestServiceReloadInOneMessage(t *testing.T) {
	s := NewService(true)
	s.Heard(true, false, false)
	if s.Heard(true, true, false) || s.Unready() {
		t.Fatalf("RELOADING=1 and READY=1 together: %+v", s)
	}
}

func TestServiceUngated(t *testing.T) {
	s := NewService(false)
	if !s.GateOpen() || s.Unready() {
		t.Fatalf("without the gate: %+v", s)
	}
	s.Heard(false, false, true)
	if !s.Unready() {
		t.Fatal("STOPPING=1 without the gate was ignored")
	}
}
