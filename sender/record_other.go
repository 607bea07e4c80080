//go:build !(linux && (amd64 || arm64))

package sender

import "syscall"

// Record does nothing here: no trampoline is written for this
// architecture, and every sender is unknown.
func Record(sigs []syscall.Signal) error { return nil }

// Of is Unknown here.
func Of(sig syscall.Signal) Sender { return Sender{Kind: Unknown} }
