module github.com/dsh-go/dsh/bash-k8s

go 1.26.0
