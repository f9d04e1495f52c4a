package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Paths inside the sandbox where Guildhall puts its own things. /run is an
// empty tmpfs inside, so nothing of the host's can sit there.
const (
	runDir       = "/run/guildhall"
	helperPath   = runDir + "/helper"
	proxySocket  = runDir + "/proxy.sock"
	sandboxTmp   = "/tmp"
	fallbackHome = "/tmp/home"
)

// hiddenAlways are folders every sandbox masks with an empty read-only
// tmpfs when they exist: daemons' sockets and state (a read-only bind does
// not stop connect() on a Unix socket, and /run/docker.sock or the D-Bus
// system bus is as good as root), other accounts' homes, and credential
// folders readable by root. /run also holds /run/secrets and /run/user
// (ssh-agent, gpg-agent, the session bus).
var hiddenAlways = []string{
	"/run", "/var/run", "/home", "/root",
	"/var/lib/docker", "/var/lib/containerd", "/var/lib/lxd", "/var/snap/lxd",
	"/var/lib/incus", "/var/lib/libvirt", "/var/lib/mysql", "/var/spool/postfix",
	"/etc/ssl/private", "/etc/letsencrypt",
}

// hiddenFiles are root-readable secrets masked with /dev/null (patterns
// as filepath.Glob takes them): password hashes, the SSH host keys, a
// Kerberos keytab.
var hiddenFiles = []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/ssh/ssh_host_*_key", "/etc/krb5.keytab"}

// The kernel's interfaces under the fresh /proc that act on the whole
// host, not the sandbox: sysctls (kernel.core_pattern runs a program as
// the host's root), the SysRq trigger, filesystem settings. Root inside
// the sandbox is the host's root to the kernel's permission checks on
// them, so they are bound read-only over themselves (procReadOnly), and
// those that show the host's processes or hardware are masked
// (procMaskFiles with /dev/null, procMaskDirs with a tmpfs), as container
// runtimes do.
var (
	procReadOnly  = []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/fs", "/proc/irq", "/proc/bus"}
	procMaskFiles = []string{"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug", "/proc/latency_stats", "/proc/timer_stats"}
	procMaskDirs  = []string{"/proc/acpi", "/proc/scsi", "/proc/asound", "/sys/firmware"}
)

// layout is everything the bwrap arguments are built from, computed from
// the host once per sandbox start.
type layout struct {
	ws       string   // canonical workspace
	readOnly bool     // the workspace is bound read-only
	writable []string // extra writable paths, canonical
	home     string   // HOME inside: the real $HOME's path, or fallbackHome
	hidden   []string // existing folders masked with an empty read-only tmpfs
	rehide   []string // hidden folders inside a writable bind, masked again after it
	files    []string // existing files masked with /dev/null
	kernel   []string // bwrap arguments protecting /proc and /sys
	varTmp   bool     // /var/tmp is a real folder (masked with a writable tmpfs)
	scratch  string   // host folder holding home/ and tmp/ of this sandbox
	git      gitView  // the workspace's .git
	orch     bool     // <ws>/.orchestration exists (and is a real folder)

	view *hostView // toolchains and build caches (hostview.go), or nil
}

// gitView is what the workspace's .git is, for its read-only mount and for
// noticing when it changes.
type gitView struct {
	exists  bool
	protect []string // paths to bind read-only over themselves
	ident   string   // type, device and inode of the .git entry
	outside []string // a linked worktree's or submodule's git directories (gitdirs.go)
}

// mountOptions vary between the helper and a git command.
type mountOptions struct {
	gitWritable bool   // the command may write .git
	proxySock   string // host path of the proxy socket to bind in, or ""
	helperExe   string // host path of the helper binary to bind in, or ""
}

// newLayout reads the host: the hidden folders that exist, the
// workspace's .git and .orchestration.
func newLayout(p Policy, ws, scratch string) (layout, error) {
	if ws == "" || ws == "/" || !filepath.IsAbs(ws) {
		return layout{}, fmt.Errorf("workspace %q cannot be sandboxed: it must be an absolute folder other than /", ws)
	}
	h := hostPaths()
	for _, home := range h.homes {
		if within(home, ws) {
			return layout{}, fmt.Errorf("workspace %s holds your home folder %s, which the sandbox must hide; open a project folder instead", ws, home)
		}
	}
	// The workspace and the writable paths were canonical when the policy
	// was made; between two starts a command may have replaced a folder on
	// their way with a link, which a bind would follow.
	for _, d := range append([]string{ws}, p.writable...) {
		if c, err := filepath.EvalSymlinks(d); err != nil || c != d {
			return layout{}, fmt.Errorf("%s is no longer the folder it was (it moved, or a link replaced part of its path); the sandbox will not bind it", d)
		}
	}
	l := layout{ws: ws, readOnly: p.mode == ReadOnly, writable: p.writable, scratch: scratch}
	l.home = fallbackHome
	if h.envHome != "" && isDir(h.envHome) {
		l.home = h.envHome
	}
	hide := append([]string(nil), hiddenAlways...)
	hide = append(hide, h.homes...)
	hide = append(hide, h.runtimeDir, h.state, h.config, h.cache)
	var exist []string
	for _, d := range hide {
		if fi, err := os.Lstat(d); d != "" && err == nil && fi.IsDir() {
			exist = append(exist, d)
		}
	}
	l.hidden, l.rehide = l.masks(dedupe(exist))
	for _, pattern := range hiddenFiles {
		matches, _ := filepath.Glob(pattern)
		for _, f := range matches {
			if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
				l.files = append(l.files, f)
			}
		}
	}
	l.kernel = kernelMasks()
	if fi, err := os.Lstat("/var/tmp"); err == nil && fi.IsDir() {
		l.varTmp = true
	}
	orch := filepath.Join(ws, ".orchestration")
	switch fi, err := os.Lstat(orch); {
	case err == nil && fi.IsDir():
		l.orch = true
	case err == nil:
		return layout{}, fmt.Errorf("%s is not a folder; the sandbox cannot hide it", orch)
	}
	l.git = inspectGit(ws, append([]string{ws}, l.writable...))
	l.git.outside = outsideGitDirs(ws)
	return l, nil
}

// inspectGit finds what must stay read-only of the workspace's .git: the
// entry itself (a folder, or a gitdir pointer file), and, when it points
// elsewhere, the git folder it leads to and that folder's commondir, if
// they lie in a writable place.
func inspectGit(ws string, writable []string) gitView {
	dotgit := filepath.Join(ws, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return gitView{}
	}
	g := gitView{exists: true, ident: fileIdent(fi)}
	inWritable := func(p string) bool {
		for _, w := range writable {
			if within(p, w) {
				return true
			}
		}
		return false
	}
	add := func(p string) {
		if c, err := filepath.EvalSymlinks(p); err == nil && inWritable(c) {
			g.protect = append(g.protect, c)
		}
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		// A bind follows the link; the link itself is watched (ident).
		add(dotgit)
	case fi.IsDir():
		g.protect = append(g.protect, dotgit)
	case fi.Mode().IsRegular():
		g.protect = append(g.protect, dotgit)
		if dir := gitdirOf(dotgit); dir != "" {
			add(dir)
			if b, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
				common := strings.TrimSpace(string(b))
				if !filepath.IsAbs(common) {
					common = filepath.Join(dir, common)
				}
				add(common)
			}
		}
	}
	g.protect = dedupe(g.protect)
	return g
}

// gitdirOf reads a "gitdir: PATH" pointer file.
func gitdirOf(file string) string {
	b, err := os.ReadFile(file)
	if err != nil || len(b) > 4096 {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(file), dir)
	}
	return dir
}

// kernelMasks protects the host-wide parts of /proc and /sys that exist
// on this kernel.
func kernelMasks() []string {
	var a []string
	for _, p := range procReadOnly {
		if _, err := os.Lstat(p); err == nil {
			a = append(a, "--ro-bind", p, p)
		}
	}
	for _, p := range procMaskFiles {
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
			a = append(a, "--ro-bind", "/dev/null", p)
		}
	}
	for _, p := range procMaskDirs {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			a = append(a, "--tmpfs", p, "--remount-ro", p)
		}
	}
	return a
}

func fileIdent(fi os.FileInfo) string {
	return fmt.Sprintf("%s:%s", fi.Mode().Type(), inodeOf(fi))
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func dedupe(ps []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// args builds the bwrap arguments (everything between "bwrap" and "--").
// Order matters: bwrap applies them in sequence, and a later mount covers
// an earlier one. First the read-only host, a fresh /dev and /proc, then
// the masks (empty tmpfs, made read-only last so that later mount points
// can still be created in them), the sandbox's own HOME and /tmp, the
// writable binds, the masks again where a writable bind would have
// uncovered them, the read-only .git and the hidden .orchestration.
func (l layout) args(o mountOptions) ([]string, error) {
	if l.scratch == "" {
		return nil, errors.New("sandbox: no scratch folder")
	}
	a := []string{
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--hostname", "sandbox",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
	}
	a = append(a, l.kernel...)
	var remount []string
	mask := func(d string) {
		a = append(a, "--tmpfs", d)
		remount = append(remount, d)
	}
	for _, d := range l.hidden {
		mask(d)
	}
	for _, f := range l.files {
		a = append(a, "--ro-bind", "/dev/null", f)
	}
	a = append(a, "--bind", filepath.Join(l.scratch, "tmp"), sandboxTmp)
	if l.varTmp {
		a = append(a, "--tmpfs", "/var/tmp")
	}
	a = append(a, "--bind", filepath.Join(l.scratch, "home"), l.home)
	if l.readOnly {
		a = append(a, "--ro-bind", l.ws, l.ws)
	} else {
		a = append(a, "--bind", l.ws, l.ws)
	}
	for _, w := range l.writable {
		a = append(a, "--bind", w, w)
	}
	for _, d := range l.rehide {
		mask(d)
	}
	a, viewMasks := l.viewArgs(a, l.view)
	remount = append(remount, viewMasks...)
	if l.git.exists {
		for _, p := range l.git.protect {
			if o.gitWritable {
				if l.readOnly && within(p, l.ws) {
					// The git tools that write may write .git even when
					// the working tree is read-only.
					a = append(a, "--bind", p, p)
				}
				continue
			}
			a = append(a, "--ro-bind", p, p)
		}
	}
	a = l.git.bindOutside(a, o.gitWritable)
	if l.orch {
		mask(filepath.Join(l.ws, ".orchestration"))
	}
	if o.helperExe != "" {
		a = append(a, "--ro-bind", o.helperExe, helperPath)
	}
	if o.proxySock != "" {
		a = append(a, "--ro-bind", o.proxySock, proxySocket)
	}
	for _, d := range remount {
		a = append(a, "--remount-ro", d)
	}
	a = append(a, "--chdir", l.ws)
	return a, nil
}

// masks splits the folders to hide into those masked before the writable
// binds and those masked again after them. A folder needs no mask of its
// own when something mounted over it already hides it: another hidden
// folder, the sandbox's HOME or /tmp. It needs a second one when it lies
// inside the workspace or an extra writable path, whose bind would show
// it. Each list is shallow first, so that a mask never covers a deeper
// mask made before it.
func (l layout) masks(dirs []string) (first, again []string) {
	covered := func(d string) bool {
		if d != l.home && within(d, l.home) || d != sandboxTmp && within(d, sandboxTmp) {
			return true
		}
		for _, o := range dirs {
			if o != d && within(d, o) {
				return true
			}
		}
		return false
	}
	for _, d := range dirs {
		switch {
		case d == l.home:
		case l.underWritable(d):
			again = append(again, d)
		case !covered(d):
			first = append(first, d)
		}
	}
	byDepth := func(s []string) {
		sort.SliceStable(s, func(i, j int) bool { return depth(s[i]) < depth(s[j]) })
	}
	byDepth(first)
	byDepth(again)
	return first, again
}

// underWritable reports whether d lies inside the workspace or an extra
// writable path (whose bind would uncover it again).
func (l layout) underWritable(d string) bool {
	if d != l.ws && within(d, l.ws) {
		return true
	}
	for _, w := range l.writable {
		if d != w && within(d, w) {
			return true
		}
	}
	return false
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }
