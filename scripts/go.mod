module github.com/dsh-go/dsh/scripts

go 1.26

require github.com/yuin/goldmark v1.8.7

require go.uber.org/goleak v1.3.0 // indirect
