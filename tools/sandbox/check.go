package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// fixNone is the fix every failure names besides its own.
const fixNone = "or run with --sandbox none (commands then run unconfined, with your files and network)"

// Check reports whether p can be enforced on this machine: Linux,
// bubblewrap on PATH, and user namespaces that bubblewrap can create. It
// runs a trivial command in a sandbox to find out. It fails closed: the
// error names the cause and the fixes. A policy that does not confine
// always passes. A success is remembered by the host.
func (h *Host) Check(p Policy) error {
	if !p.Confined() {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bwrap != "" {
		return nil
	}
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the sandbox cannot start: it needs Linux (bubblewrap and user namespaces), and this is %s; a macOS seatbelt profile may come later. Run with --sandbox none to run commands unconfined", runtime.GOOS)
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return fmt.Errorf("the sandbox cannot start: bubblewrap (bwrap) is not on PATH. Install bubblewrap (Debian, Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap), %s", fixNone)
	}
	if err := probe(bwrap); err != nil {
		return err
	}
	h.bwrap = bwrap
	return nil
}

func (h *Host) bwrapPath() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.bwrap
}

// probe runs bwrap's own binary, asking its version, in the namespaces
// every sandbox uses.
func probe(bwrap string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bwrap, "--unshare-all", "--unshare-user", "--disable-userns",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", bwrap, "--version")
	cmd.Env = []string{}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err == nil {
		return nil
	}
	said := strings.TrimSpace(out.String())
	if len(said) > 500 {
		said = said[:500]
	}
	if cause, fix := usernsCause(); cause != "" {
		return fmt.Errorf("the sandbox cannot start: user namespaces are disabled (%s). %s, %s. (bwrap said: %s)", cause, fix, fixNone, said)
	}
	return fmt.Errorf("the sandbox cannot start: bubblewrap could not create its namespaces (bwrap said: %s). Check that unprivileged user namespaces are enabled, or update bubblewrap, %s", said, fixNone)
}

// usernsCause reads the settings that disable user namespaces, and the
// fix for the one that is set.
func usernsCause() (cause, fix string) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	root := os.Geteuid() == 0
	switch {
	case read("/proc/sys/user/max_user_namespaces") == "0":
		return "user.max_user_namespaces is 0", "Enable them with `sysctl -w user.max_user_namespaces=15000` (as root; persist it in /etc/sysctl.d)"
	case !root && read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
		return "kernel.unprivileged_userns_clone is 0", "Enable them with `sysctl -w kernel.unprivileged_userns_clone=1` (as root; persist it in /etc/sysctl.d)"
	case !root && read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
		return "AppArmor restricts unprivileged user namespaces: kernel.apparmor_restrict_unprivileged_userns is 1",
			"Allow bwrap with an AppArmor profile (Ubuntu 24.04 and later ship one in the apparmor package as /etc/apparmor.d/bwrap-userns-restrict), or set `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`"
	}
	return "", ""
}
