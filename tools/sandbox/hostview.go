package sandbox

// The host view of a run's sandbox beyond the base layout of mounts.go:
// the operator's toolchains, read-only (toolchains.go), with the
// denylisted paths inside them masked (denylist.go), and the workspace's
// writable build caches (caches.go). It is found once per run, at the
// first command, and added to every start of the run's helper.

import (
	"context"
	"fmt"
	"os"
	"sort"
)

// hostView is what a run's helper shows beyond the base layout.
type hostView struct {
	tools  Toolchains
	caches []buildCache
	// cacheErr is why the caches, or the operator's cargo configuration in
	// the workspace's CARGO_HOME, are missing; a failed command says so.
	cacheErr error
}

// hostAllowed reports whether p lets commands reach host on port 443.
func hostAllowed(p Policy, host string) bool {
	ok, _ := p.Allow().Allows(host, 443)
	return p.Network() == NetworkAllowlist && ok
}

// policyCaches is the kinds of cache a workspace of policy p gets.
func policyCaches(p Policy) []cacheKind {
	return kindsFor(func(host string) bool { return hostAllowed(p, host) })
}

// env points env's cache variables at the workspace's caches (where they
// do not name a folder the command may write anyway), and the tools at
// its download caches (downloadEnv).
func (v *hostView) env(env []string, p Policy, ws string) []string {
	writable := func(d string) bool {
		if within(d, ws) && p.Mode() != ReadOnly {
			return true
		}
		for _, w := range p.Writable() {
			if within(d, w) {
				return true
			}
		}
		return false
	}
	return downloadEnv(cacheEnv(env, v.caches, writable), v.caches, v.tools)
}

// ensureView finds the run's host view: the toolchains once, their masks
// and the caches again at every start (a credential file may have
// appeared, the cache folder may have been removed).
//
// It returns a copy: a later refresh replaces the view's slices rather
// than changing them, so a caller may read its copy without the lock.
func (s *Sandbox) ensureView() *hostView {
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	if v := s.view; v != nil {
		v.tools.remask(hostPaths().denied())
		v.refreshCaches(s.opts)
		c := *v
		return &c
	}
	v := &hostView{tools: DiscoverToolchains(context.Background(), os.Getenv, s.opts.Workspace, s.opts.Policy.ReadOnly())}
	v.refreshCaches(s.opts)
	s.view = v
	c := *v
	return &c
}

// refreshCaches makes the workspace's caches again, and gives its own
// CARGO_HOME, where there is one, a fresh copy of the operator's cargo
// configuration (seedCargoHome).
func (v *hostView) refreshCaches(o Options) {
	v.caches, v.cacheErr = ensureCaches(o.Workspace, policyCaches(o.Policy))
	if v.cacheErr != nil {
		return
	}
	for _, c := range v.caches {
		if c.name == "cargo-home" {
			if err := seedCargoHome(c.path, v.tools.operatorPath("rust", "CARGO_HOME", "")); err != nil {
				v.cacheErr = fmt.Errorf("%s: %w", c.path, err)
			}
		}
	}
}

// currentView is a copy of the view the latest start found, or nil.
func (s *Sandbox) currentView() *hostView {
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	if s.view == nil {
		return nil
	}
	c := *s.view
	return &c
}

// viewArgs adds v's binds to a, after the base layout's masks and writable
// binds and before the masks are made read-only: each toolchain mount
// that lies in a masked place (HOME, /tmp, a hidden folder) bound
// read-only at its path, the denylisted paths inside them masked, then
// the caches bound writable. It returns the tmpfs masks to make
// read-only.
func (l layout) viewArgs(a []string, v *hostView) ([]string, []string) {
	if v == nil {
		return a, nil
	}
	var remount []string
	shown := map[string]bool{}
	// Shallow first, so that no mount covers a deeper one made before it.
	ms := append([]Mount(nil), v.tools.Mounts...)
	sort.SliceStable(ms, func(i, j int) bool { return depth(ms[i].Path) < depth(ms[j].Path) })
	for _, m := range ms {
		if l.underWritable(m.Path) || within(m.Path, l.ws) || !l.maskedPlace(m.Path) || !exists(m.Src) {
			// A toolchain removed since the run started is left out
			// rather than failing every start of the sandbox.
			continue
		}
		a = append(a, "--ro-bind", m.Src, m.Path)
		shown[m.Path] = true
	}
	for _, mk := range v.tools.masks {
		if !l.maskedPlace(mk.path) || !shownUnder(shown, mk.path) || !exists(mk.src) {
			continue
		}
		if mk.dir {
			a = append(a, "--tmpfs", mk.path)
			remount = append(remount, mk.path)
		} else {
			a = append(a, "--ro-bind", "/dev/null", mk.path)
		}
	}
	for _, c := range v.caches {
		a = append(a, "--bind", c.path, c.path)
	}
	return a, remount
}

// shownUnder reports whether p lies in one of the shown mounts.
func shownUnder(shown map[string]bool, p string) bool {
	for m := range shown {
		if within(p, m) {
			return true
		}
	}
	return false
}

// maskedPlace reports whether p would be out of sight without a mount of
// its own: in the sandbox's HOME or /tmp, /var/tmp, or a hidden folder.
func (l layout) maskedPlace(p string) bool {
	if within(p, l.home) || within(p, sandboxTmp) || l.varTmp && within(p, "/var/tmp") {
		return true
	}
	for _, d := range append(append([]string(nil), l.hidden...), l.rehide...) {
		if within(p, d) {
			return true
		}
	}
	return false
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
