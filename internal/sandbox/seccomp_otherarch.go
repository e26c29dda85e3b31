//go:build linux && !amd64 && !arm64

package sandbox

// No filter is built for this architecture: a confined start fails unless it is best effort.
const (
	auditArch = 0
	x32Bit    = 0xffffffff
)
