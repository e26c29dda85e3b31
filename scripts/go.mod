module github.com/dsh-go/dsh/scripts

go 1.26

require github.com/yuin/goldmark v1.8.7
