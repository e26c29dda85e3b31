module github.com/dsh-go/dsh/tool-bash

go 1.26.0

require (
	github.com/dsh-go/dsh/bash v0.1.0
	github.com/dsh-go/dsh/bash-local v0.1.0
	github.com/dsh-go/dsh/tools v0.1.0
)

require (
	github.com/dsh-go/dsh/internal v0.1.0
	github.com/google/jsonschema-go v0.4.3 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

require (
	github.com/creack/pty v1.1.24 // indirect
	github.com/landlock-lsm/go-landlock v0.11.2 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)
