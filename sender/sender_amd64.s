//go:build linux

#include "textflag.h"

// trampoline is entered by the kernel with the C calling convention: DI
// the signal number, SI the siginfo, DX the context. It copies si_pid and
// si_uid (offset 16) and si_code (offset 8) into the table, then jumps to
// the runtime's handler with DI, SI, DX and the stack untouched (AX and
// CX are scratch registers of the C convention).
TEXT ·trampoline(SB),NOSPLIT|NOFRAME,$0-0
	MOVQ	16(SI), AX
	LEAQ	·senders(SB), CX
	MOVQ	AX, (CX)(DI*8)
	MOVLQZX	8(SI), AX
	BTSQ	$32, AX
	LEAQ	·codes(SB), CX
	MOVQ	AX, (CX)(DI*8)
	LEAQ	·next(SB), CX
	MOVQ	(CX)(DI*8), AX
	JMP	AX

// func trampolineAddr() uintptr
TEXT ·trampolineAddr(SB),NOSPLIT,$0-8
	LEAQ	·trampoline(SB), AX
	MOVQ	AX, ret+0(FP)
	RET
