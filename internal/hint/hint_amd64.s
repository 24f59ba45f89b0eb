#include "textflag.h"

// func pause()
TEXT ·pause(SB), NOSPLIT|NOFRAME, $0-0
	PAUSE
	RET

// func prefetchw(p unsafe.Pointer)
TEXT ·prefetchw(SB), NOSPLIT, $0-8
	MOVQ	p+0(FP), AX
	// PREFETCHW (AX): 0F 0D /1
	BYTE	$0x0F; BYTE $0x0D; BYTE $0x08
	RET

// func cpuid(leaf uint32) (eax, ecx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-16
	MOVL	leaf+0(FP), AX
	XORL	CX, CX
	CPUID
	MOVL	AX, eax+8(FP)
	MOVL	CX, ecx+12(FP)
	RET
