//go:build linux

package sandboxtest

const sysSetns = 308
