package hint

import "unsafe"

func pause()

//go:noescape
func prefetchWrite(p unsafe.Pointer)
