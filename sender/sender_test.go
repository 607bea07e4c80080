package sender

import (
	"syscall"
	"testing"
)

func TestDecode(t *testing.T) {
	code := func(c int32) uint64 { return uint64(uint32(c)) | written }
	who := func(pid int32, uid uint32) uint64 { return uint64(uint32(pid)) | uint64(uid)<<32 }
	for _, c := range []struct {
		name      string
		who, code uint64
		want      Sender
	}{
		{"never written", who(7, 1000), 0, Sender{Kind: Unknown}},
		{"kill from a process", who(7, 1000), code(siUser), Sender{Kind: Process, Pid: 7, Uid: 1000}},
		{"tgkill", who(8, 0), code(siTkill), Sender{Kind: Process, Pid: 8}},
		{"sigqueue", who(9, 5), code(siQueue), Sender{Kind: Process, Pid: 9, Uid: 5}},
		{"kill from outside the namespace", who(0, 0), code(siUser), Sender{Kind: Outside}},
		{"outside, another uid", who(0, 65534), code(siUser), Sender{Kind: Outside, Uid: 65534}},
		{"the kernel", who(0, 0), code(0x80), Sender{Kind: Kernel}},
		{"a timer's expiry is not a process", who(3, 4), code(-2), Sender{Kind: Kernel}},
		{"a uid with the top bit", who(7, 1<<31), code(siUser), Sender{Kind: Process, Pid: 7, Uid: 1 << 31}},
	} {
		if got := decode(c.who, c.code); got != c.want {
			t.Errorf("%s: decode = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestRecordable(t *testing.T) {
	for sig, want := range map[syscall.Signal]bool{
		syscall.SIGTERM: true, syscall.SIGINT: true, syscall.SIGHUP: true, 64: true,
		syscall.SIGSEGV: false, syscall.SIGKILL: false, syscall.SIGSTOP: false, 0: false, 65: false, -1: false,
	} {
		if got := recordable(sig); got != want {
			t.Errorf("recordable(%v) = %v, want %v", sig, got, want)
		}
	}
}

func TestOfOutOfRange(t *testing.T) {
	for _, sig := range []syscall.Signal{0, -3, maxSig + 1} {
		if got := Of(sig); got.Kind != Unknown {
			t.Errorf("Of(%d) = %+v, want unknown", sig, got)
		}
	}
}
