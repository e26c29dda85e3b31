package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Access rights, as Landlock names them.
const (
	readRights = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	// writeRights is everything but creating device files: a writable root must never hold a
	// block device the command could then open.
	writeRights = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate
	deviceRights = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// handledFS returns the file-system rights Landlock ABI abi knows, up to device ioctls (ABI 5).
// Pathname Unix sockets (ABI 9) are closed by the seccomp filter on every kernel instead.
func handledFS(abi int) uint64 {
	switch {
	case abi >= 5:
		return 1<<16 - 1
	case abi == 4, abi == 3:
		return 1<<15 - 1
	case abi == 2:
		return 1<<14 - 1
	default:
		return 1<<13 - 1
	}
}

// ruleset is one compiled Landlock ruleset and what must be unchanged for it to stay right: the
// directories whose entries were listed one by one, with their modification times.
type ruleset struct {
	fd     int
	listed map[string]time.Time
}

// fresh reports whether no listed directory gained or lost an entry since r was built.
func (r *ruleset) fresh() bool {
	for dir, mtime := range r.listed {
		fi, err := os.Stat(dir)
		if err != nil || !fi.ModTime().Equal(mtime) {
			return false
		}
	}
	return true
}

// ruleCache keeps one ruleset per policy. A stale one is replaced and closed once no start uses it:
// rulesets are closed only by close, since a start may be using an older one (the kernel keeps a
// domain alive on its own once it is enforced, so the descriptor is only needed while starting).
type ruleCache struct {
	abi   int
	mu    sync.Mutex
	sets  map[string]*ruleset
	stale []*ruleset
}

const maxRulesets = 32

func (c *ruleCache) get(r resolved, network bool) (*ruleset, error) {
	key := strings.Join(r.writable, "\x00") + "\x01" + strings.Join(r.deny, "\x00") + fmt.Sprint(network)
	c.mu.Lock()
	defer c.mu.Unlock()
	if rs, ok := c.sets[key]; ok {
		if rs.fresh() {
			return rs, nil
		}
		c.stale = append(c.stale, rs)
		delete(c.sets, key)
	}
	rs, err := build(c.abi, r, network)
	if err != nil {
		return nil, err
	}
	if c.sets == nil {
		c.sets = map[string]*ruleset{}
	}
	if len(c.sets) >= maxRulesets {
		for k, old := range c.sets { // any one: a cache this full is a caller's unusual workload
			c.stale = append(c.stale, old)
			delete(c.sets, k)
			break
		}
	}
	c.sets[key] = rs
	return rs, nil
}

func (c *ruleCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range c.sets {
		unix.Close(rs.fd)
	}
	for _, rs := range c.stale {
		unix.Close(rs.fd)
	}
	c.sets, c.stale = nil, nil
}

// build compiles the ruleset of r for Landlock ABI abi: everything readable but the deny paths,
// the writable roots writable, the usual devices writable, TCP closed when the network is off,
// signals and abstract sockets scoped to the sandbox.
func build(abi int, r resolved, network bool) (*ruleset, error) {
	attr := ll.RulesetAttr{HandledAccessFS: handledFS(abi)}
	if abi >= 4 && !network {
		attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if abi >= 6 {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: landlock_create_ruleset: %w", err)
	}
	rs := &ruleset{fd: fd, listed: map[string]time.Time{}}
	b := builder{fd: fd, handled: attr.HandledAccessFS, deny: r.deny, listed: rs.listed}
	err = b.readable("/")
	for _, w := range r.writable {
		err = errors.Join(err, b.add(w, readRights|writeRights, true))
	}
	for _, d := range devices {
		err = errors.Join(err, b.add(d, deviceRights, false))
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return rs, nil
}

type builder struct {
	fd      int
	handled uint64
	deny    []string
	listed  map[string]time.Time
}

// add allows rights under path; a path that does not exist is skipped unless required.
func (b *builder) add(path string, rights uint64, required bool) error {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if !required && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES)) {
			return nil
		}
		return fmt.Errorf("sandbox: open %s: %w", path, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("sandbox: stat %s: %w", path, err)
	}
	rights &= b.handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	}
	attr := ll.PathBeneathAttr{AllowedAccess: rights, ParentFd: pfd}
	if err := ll.LandlockAddPathBeneathRule(b.fd, &attr, 0); err != nil {
		return fmt.Errorf("sandbox: landlock_add_rule %s: %w", path, err)
	}
	return nil
}

// readable makes dir readable except the deny paths: a directory that holds none is one rule; one
// that holds some is listed (and may be listed, since READ_DIR is granted on "/"), and each of its
// entries is made readable in turn, the denied ones left out.
func (b *builder) readable(dir string) error {
	if dir == "/" {
		if err := b.add("/", ll.AccessFSReadDir, true); err != nil {
			return err
		}
	}
	holds := false
	for _, d := range b.deny {
		if d == dir {
			return nil
		}
		holds = holds || within(d, dir)
	}
	if !holds {
		return b.add(dir, readRights, false)
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil // an ancestor of a deny path we cannot list: leave it unreadable
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("sandbox: stat %s: %w", dir, err)
	}
	names, err := f.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("sandbox: list %s: %w", dir, err)
	}
	b.listed[dir] = fi.ModTime()
	for _, name := range names {
		entry := filepath.Join(dir, name)
		if fi, err := os.Lstat(entry); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			// A link is read through its target, which has rules of its own; following this
			// one could lead into a deny path.
			continue
		}
		if err := b.readable(entry); err != nil {
			return err
		}
	}
	return nil
}
