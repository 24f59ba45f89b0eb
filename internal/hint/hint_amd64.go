package hint

import "unsafe"

func pause()

//go:noescape
func prefetchw(p unsafe.Pointer)

func cpuid(leaf uint32) (eax, ecx uint32)

// hasPrefetchW: CPUID 0x80000001, ECX bit 8 (PRFCHW, "3dnowprefetch" in
// Linux's flags). Without it, the instruction may fault.
var hasPrefetchW = func() bool {
	if max, _ := cpuid(0x80000000); max < 0x80000001 {
		return false
	}
	_, ecx := cpuid(0x80000001)
	return ecx&(1<<8) != 0
}()

func prefetchWrite(p unsafe.Pointer) {
	if hasPrefetchW {
		prefetchw(p)
	}
}
