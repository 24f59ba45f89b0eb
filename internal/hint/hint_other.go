//go:build !amd64 && !arm64

package hint

import "unsafe"

func pause() {}

func prefetchWrite(unsafe.Pointer) {}
