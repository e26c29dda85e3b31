package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// modulePrefix is the path prefix of this project's modules.
const modulePrefix = "github.com/dsh-go/dsh/"

// runVersion is `dsh version`: the version of dsh and of every module of this project it was
// built from, read from the build information the go command embeds. A line is `PATH VERSION`,
// with ` => DIR` added when go.work (or a replace) took the module from a directory; a build
// from a clone says "(devel)" for dsh itself.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "dsh version: unexpected arguments %q\n", args)
		return exitUsage
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintf(stdout, "dsh (unknown version: built without module information) %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return exitOK
	}
	fmt.Fprintf(stdout, "dsh %s %s %s/%s\n", info.Main.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, m := range info.Deps {
		if !strings.HasPrefix(m.Path, modulePrefix) {
			continue
		}
		line := m.Path + " " + m.Version
		if m.Replace != nil {
			line += " => " + m.Replace.Path
			if m.Replace.Version != "" {
				line += " " + m.Replace.Version
			}
		}
		fmt.Fprintln(stdout, line)
	}
	return exitOK
}
