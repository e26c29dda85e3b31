// Command kbuild builds (or finds in its cache) the kube-apiserver and kubelet the bash-k8s tests
// run, and prints their paths. ./test runs it before the tests so that a cold build is paid once.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/dsh-go/dsh/bash-k8s/internal/kcluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bins, err := kcluster.Build(ctx, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(bins.APIServer)
	fmt.Println(bins.Kubelet)
}
