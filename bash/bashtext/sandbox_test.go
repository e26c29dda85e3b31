package bashtext_test

import (
	"reflect"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/bashtext"
)

func TestConfines(t *testing.T) {
	tests := []struct {
		s    bash.Sandbox
		want string
	}{
		{bash.Sandbox{Mode: bash.SandboxWorkspaceWrite},
			"can write only in the workspace and in $TMPDIR, cannot use the network or Unix sockets, and cannot signal or trace processes outside it"},
		{bash.Sandbox{Mode: bash.SandboxReadOnly},
			"can write only in $TMPDIR (the workspace is read-only), cannot use the network or Unix sockets, and cannot signal or trace processes outside it"},
		{bash.Sandbox{Mode: bash.SandboxWorkspaceWrite, Network: bash.NetworkOn},
			"can write only in the workspace and in $TMPDIR, may use the network but not Unix sockets, and cannot signal or trace processes outside it"},
	}
	for _, tt := range tests {
		if got := bashtext.Confines(tt.s); got != tt.want {
			t.Errorf("Confines(%+v)\n got %q\nwant %q", tt.s, got, tt.want)
		}
	}
}

func TestSandboxMarkers(t *testing.T) {
	tests := []struct {
		name string
		r    *bash.SandboxReport
		want []string
	}{
		{"nil", nil, nil},
		{"nothing to say", &bash.SandboxReport{}, nil},
		{"denial", &bash.SandboxReport{Denial: "write outside the workspace denied: /etc/hosts"}, []string{"[sandbox: write outside the workspace denied: /etc/hosts]"}},
		{"unenforced first", &bash.SandboxReport{Unenforced: []string{"network", "signals"}, Denial: "d"}, []string{"[sandbox: not enforced: network; signals]", "[sandbox: d]"}},
	}
	for _, tt := range tests {
		if got := bashtext.SandboxMarkers(tt.r); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: SandboxMarkers = %q, want %q", tt.name, got, tt.want)
		}
	}
}
