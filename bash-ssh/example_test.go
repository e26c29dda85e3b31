package bashssh_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/dsh-go/dsh/bash"
	bashssh "github.com/dsh-go/dsh/bash-ssh"
)

// An executor for a build box: the host key must be in known_hosts, the key file (or an ssh-agent)
// authenticates. The harness uses it through bash.Executor, exactly as it would the local backend.
func ExampleNew() {
	ex, err := bashssh.New(bashssh.Config{
		Host:            "build.example.com",
		User:            "ci",
		KnownHostsFiles: []string{"/etc/dsh/known_hosts"},
		IdentityFiles:   []string{"/etc/dsh/id_ed25519"},
		Workdir:         "~/src/project",
	})
	if err != nil {
		log.Fatal(err) // an invalid field, an unreadable key or known_hosts file
	}
	defer ex.Close(context.Background()) // stops everything it started on the host

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ex.Connect(ctx); err != nil {
		var hk *bashssh.HostKeyError
		if errors.As(err, &hk) {
			log.Fatalf("refusing %s: %v", hk.Host, err) // unknown or changed host key
		}
		log.Fatal(err) // unreachable, authentication refused, …
	}

	var executor bash.Executor = ex
	spec, err := executor.Resolve(bash.Request{Command: "go test ./..."})
	if err != nil {
		log.Fatal(err)
	}
	res, err := executor.Run(ctx, spec)
	switch {
	case errors.Is(err, bashssh.ErrConnectionLost):
		log.Fatal(err) // the command may still run there; the executor stops it on reconnect
	case err != nil:
		log.Fatal(err)
	}
	fmt.Print(res.Stdout.Text())
	if res.ExitCode != nil {
		fmt.Println("exit code", *res.ExitCode)
	}
}
