//go:build !linux || !(amd64 || arm64)

package sandboxtest

import "errors"

func probe(op string, args []string) error { return errors.New("the probe runs on Linux only") }
