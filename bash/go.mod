module github.com/dsh-go/dsh/bash

go 1.26.0
