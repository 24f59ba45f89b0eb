//go:build !amd64 && !arm64

package spin

func pause() {}
