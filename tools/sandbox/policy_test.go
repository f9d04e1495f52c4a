package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewPolicyDefaultsAndSummary(t *testing.T) {
	extra := t.TempDir()
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{}, "sandbox: workspace-write, network off"},
		{Config{Mode: "read-only"}, "sandbox: read-only, network off"},
		{Config{Mode: "none", Network: "allowlist", Allow: []string{"pypi.org"}}, "sandbox: none (commands run unconfined; the web tools reach 1 allowed host)"},
		{Config{Mode: "none"}, "sandbox: none (commands run unconfined)"},
		{Config{Network: "allowlist", Allow: []string{"proxy.golang.org", "sum.golang.org", "*.npmjs.org"}}, "sandbox: workspace-write, network allowlist (3 hosts)"},
		{Config{Network: "allowlist", Allow: []string{"pypi.org:443"}}, "sandbox: workspace-write, network allowlist (1 host)"},
		{Config{Network: "allowlist"}, "sandbox: workspace-write, network allowlist (0 hosts)"},
		{Config{Writable: []string{extra}}, "sandbox: workspace-write, network off, 1 extra writable path"},
	}
	for _, c := range cases {
		p, err := NewPolicy(c.cfg)
		if err != nil {
			t.Errorf("%+v: %v", c.cfg, err)
			continue
		}
		if got := p.Summary(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.cfg, got, c.want)
		}
	}
	p, _ := NewPolicy(Config{})
	if !p.Confined() || p.WithMode(None).Confined() || p.Mode() != WorkspaceWrite || p.Network() != NetworkOff {
		t.Errorf("defaults: %+v", p)
	}
}

func TestNewPolicyRefusesBadValues(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Mode: "full"}, `sandbox mode "full" is not one of workspace-write, read-only, none`},
		{Config{Mode: "Workspace-Write"}, "is not one of"},
		{Config{Network: "on"}, `sandbox network "on" is not one of off, allowlist`},
		{Config{Allow: []string{"pypi.org", "*"}}, "sandbox.allow[1]"},
		{Config{Allow: []string{"https://pypi.org"}}, "not a URL"},
		{Config{Writable: []string{"relative/cache"}}, "sandbox.writable[0] \"relative/cache\": a writable path must be absolute"},
		{Config{Writable: []string{"/nonexistent-guildhall-cache"}}, "does not exist"},
		{Config{Writable: []string{"/"}}, "turns the sandbox off"},
		{Config{Writable: []string{"/proc/self"}}, "/proc is not a place"},
		{Config{Writable: []string{"/run"}}, "/run is not a place"},
		{Config{Writable: []string{"/dev/shm"}}, "/dev is not a place"},
	}
	for _, c := range cases {
		_, err := NewPolicy(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// A writable path may not uncover what the sandbox hides: the home folder
// (or a folder holding it), credentials under it, the runtime folder,
// Guildhall's state and configuration. A build cache under HOME is fine,
// including through a symbolic link.
func TestCheckWritable(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	for _, d := range []string{".ssh", ".cache/go-build", ".config/guildhall", ".local/state/guildhall", ".gnupg/private", "runtime"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "runtime"))
	link := filepath.Join(root, "cache-link")
	if err := os.Symlink(filepath.Join(home, ".cache", "go-build"), link); err != nil {
		t.Fatal(err)
	}
	sshLink := filepath.Join(root, "ssh-link")
	if err := os.Symlink(filepath.Join(home, ".ssh"), sshLink); err != nil {
		t.Fatal(err)
	}
	ok := map[string]string{
		filepath.Join(home, ".cache", "go-build"): filepath.Join(home, ".cache", "go-build"),
		link: filepath.Join(home, ".cache", "go-build"),
	}
	for in, want := range ok {
		got, err := CheckWritable(in)
		if err != nil || got != want {
			t.Errorf("%s: %q, %v", in, got, err)
		}
	}
	bad := map[string]string{
		home:                                   "your home folder",
		root:                                   "your home folder",
		filepath.Join(home, ".ssh"):            "credentials",
		sshLink:                                "credentials",
		filepath.Join(home, ".gnupg/private"):  "credentials",
		filepath.Join(home, ".config"):         "credentials",
		filepath.Join(home, ".local", "state"): "Guildhall's own state",
		filepath.Join(home, "runtime"):         "agent sockets",
	}
	for in, want := range bad {
		if _, err := CheckWritable(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}
