package main

import (
	"bufio"
	"encoding/hex"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/dsh-go/dsh/internal/proctree"
)

// fromOwnCommand reports whether the TCP connection from remote to local (dsh's side) was made
// by a process that descends from dsh: one of the commands it runs, or what they started (dsh
// is their subreaper, so no descendant leaves the tree by being orphaned). It finds the client
// socket in /proc/net/tcp and tcp6 (only a peer on this machine, in dsh's network namespace,
// is there) and looks for it among the descendants' descriptors.
func fromOwnCommand(local, remote net.Addr) bool {
	l, ok1 := addrPort(local)
	r, ok2 := addrPort(remote)
	if !ok1 || !ok2 {
		return false
	}
	inode := ""
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if inode = socketInode(table, r, l); inode != "" {
			break
		}
	}
	if inode == "" {
		return false
	}
	target := "socket:[" + inode + "]"
	self, _ := os.Readlink("/proc/self/exe")
	for _, pid := range descendants(os.Getpid()) {
		proc := "/proc/" + strconv.Itoa(pid)
		if exe, _ := os.Readlink(proc + "/exe"); exe == self {
			continue // forked and not yet exec'd: a copy of dsh's descriptors, about to be closed
		}
		dir := proc + "/fd"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(dir + "/" + fd.Name()); err == nil && link == target {
				return true
			}
		}
	}
	return false
}

// addrPort returns a as an address and port, with an IPv4-mapped address unmapped.
func addrPort(a net.Addr) (netip.AddrPort, bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}, false
	}
	ap := ta.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}

// socketInode returns the inode of the socket whose local end is local and remote end remote
// in the /proc/net/tcp-format file table, or "" when there is none.
func socketInode(table string, local, remote netip.AddrPort) string {
	f, err := os.Open(table)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l, r, inode, ok := parseTCPLine(sc.Text())
		if ok && l == local && r == remote {
			return inode
		}
	}
	return ""
}

// parseTCPLine reads one line of /proc/net/tcp or tcp6: the local and remote address and the
// socket's inode; false for the header or a line it cannot read.
func parseTCPLine(line string) (local, remote netip.AddrPort, inode string, ok bool) {
	f := strings.Fields(line)
	if len(f) < 10 {
		return local, remote, "", false
	}
	local, ok1 := parseProcAddr(f[1])
	remote, ok2 := parseProcAddr(f[2])
	if !ok1 || !ok2 || f[9] == "0" || strings.Trim(f[9], "0123456789") != "" {
		return local, remote, "", false
	}
	return local, remote, f[9], true
}

// parseProcAddr reads an address of /proc/net/tcp ("0100007F:1F90") or tcp6: the address in hex
// as 32-bit words each in host (little-endian) order, then the port in hex.
func parseProcAddr(s string) (netip.AddrPort, bool) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok || len(hexPort) != 4 {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	raw, err2 := hex.DecodeString(hexAddr)
	if err != nil || err2 != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(raw); i += 4 { // each word is little-endian
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), true
}

// descendants returns the processes below pid, read from /proc.
func descendants(pid int) []int {
	all, _ := proctree.Snapshot()
	kids := map[int][]int{}
	for _, st := range all {
		kids[st.PPID] = append(kids[st.PPID], st.PID)
	}
	var out []int
	queue := kids[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		queue = append(queue, kids[p]...)
	}
	return out
}
