//go:build linux

#include "textflag.h"

// trampoline is entered by the kernel with the C calling convention: R0
// the signal number, R1 the siginfo, R2 the context, LR the return to the
// kernel's restorer. It copies si_pid and si_uid (offset 16) and si_code
// (offset 8) into the table, then jumps to the runtime's handler with R0,
// R1, R2, LR and the stack untouched (R9 and R10 are scratch registers of
// the C convention).
TEXT ·trampoline(SB),NOSPLIT|NOFRAME,$0-0
	MOVD	16(R1), R10
	MOVD	$·senders(SB), R9
	MOVD	R10, (R9)(R0<<3)
	MOVWU	8(R1), R10
	ORR	$(1<<32), R10, R10
	MOVD	$·codes(SB), R9
	MOVD	R10, (R9)(R0<<3)
	MOVD	$·next(SB), R9
	MOVD	(R9)(R0<<3), R9
	JMP	(R9)

// func trampolineAddr() uintptr
TEXT ·trampolineAddr(SB),NOSPLIT,$0-8
	MOVD	$·trampoline(SB), R0
	MOVD	R0, ret+0(FP)
	RET
