package notify

import "testing"

func TestSendReachesListener(t *testing.T) {
	l, out := serve(t, Abstract)
	s, err := Dial(l.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Send("READY=1\nSTATUS=up"); err != nil {
		t.Fatal(err)
	}
	if d := receive(t, out); !d.Msg.Has(KindReady) || d.Msg.Status != "up" {
		t.Fatalf("got %+v", d.Msg)
	}
}

func TestSendToNobodyFailsWithoutWaiting(t *testing.T) {
	s, err := Dial("@lfinit-test-nobody-listens-here")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Send("READY=1") == nil {
		t.Fatal("a send to no receiver succeeded")
	}
}
