module github.com/dsh-go/dsh/bash-policy

go 1.26.0

require (
	github.com/dsh-go/dsh/tools v0.1.0
	mvdan.cc/sh/v3 v3.14.1
)

require github.com/google/jsonschema-go v0.4.3 // indirect
