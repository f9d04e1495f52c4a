package sandbox

// The git directories of a linked worktree or a submodule checkout lie
// outside the workspace, usually under the operator's HOME (masked in
// every sandbox) or /tmp (the sandbox's own). Without them neither the git
// tools nor `git status` in a command could find the repository. This file
// shows exactly those directories, and only once store.ResolveGitLayout
// has checked that they are this workspace's (not what a planted `.git`
// file names): writable to the git tools that write the repository,
// read-only to everything else.

import "github.com/guildhall/guildhall/store"

// outsideGitDirs are the checked git directories of the workspace's
// repository that lie outside it; nil when there are none or the layout is
// refused (the git tools then refuse it too).
func outsideGitDirs(ws string) []string {
	l, err := store.ResolveGitLayout(ws)
	if err != nil {
		return nil
	}
	return l.OutsideDirs()
}

// bindOutside adds the binds of the outside git directories to a: over
// themselves, writable when writable (a git tool that writes the
// repository), read-only otherwise. They come after the masks and the
// writable binds, so they are shown even inside a masked HOME, and before
// the masks' remount, so their mount points can still be made.
func (g gitView) bindOutside(a []string, writable bool) []string {
	op := "--ro-bind"
	if writable {
		op = "--bind"
	}
	for _, d := range g.outside {
		a = append(a, op, d, d)
	}
	return a
}
