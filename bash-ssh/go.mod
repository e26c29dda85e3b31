module github.com/dsh-go/dsh/bash-ssh

go 1.26.0

require (
	github.com/dsh-go/dsh/bash v0.1.0
	github.com/dsh-go/dsh/bash-local v0.1.0
	golang.org/x/crypto v0.59.0
)

require (
	github.com/creack/pty v1.1.24 // indirect
	github.com/landlock-lsm/go-landlock v0.11.2 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)

require (
	github.com/dsh-go/dsh/internal v0.1.0
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
