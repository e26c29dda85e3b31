//go:build linux

package sandbox

import (
	"os/exec"
	"testing"
)

func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	sb := New(Options{})
	defer sb.Close()
	p, err := sb.Prepare(Policy{Writable: []string{dir}, DenyRead: []string{"/root/.ssh"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			c := exec.Command("/bin/true")
			if err := c.Start(); err != nil {
				b.Fatal(err)
			}
			c.Wait()
		}
	})
	b.Run("confined", func(b *testing.B) {
		for b.Loop() {
			c := exec.Command("/bin/true")
			if err := p.Start(c); err != nil {
				b.Fatal(err)
			}
			c.Wait()
		}
	})
	b.Run("prepare", func(b *testing.B) {
		for b.Loop() {
			if _, err := sb.Prepare(Policy{Writable: []string{dir}, DenyRead: []string{"/root/.ssh"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
