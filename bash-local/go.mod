module github.com/dsh-go/dsh/bash-local

go 1.26

require github.com/dsh-go/dsh/bash v0.0.0
