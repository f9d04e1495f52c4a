package tools

// gitWrites reports whether a git command (its arguments after the -c
// hardening) writes the repository, and so needs .git writable in its
// sandbox (and a linked worktree's or submodule's git directories outside
// the workspace, tools/sandbox/gitdirs.go): the ones git_init, git_commit
// and git_branch run, and git_restore's, which holds the index lock while
// it writes the work tree. Everything else, git_set_base's rev-parse and
// the read-only tools' diff, status and show included, gets them
// read-only; with GIT_OPTIONAL_LOCKS=0 they write nothing there.
func gitWrites(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "init", "add", "rm", "commit", "branch", "restore":
		return true
	}
	return false
}
