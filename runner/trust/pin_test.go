package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestDiscoverPinsWhatAServerRuns: for each way a command line names the
// workspace's program, trusting pins it: a change to it (an edit, a new
// file that shadows it, a retargeted link) changes the hash, so the
// decision is asked again, and the server's Verify refuses to start it; a
// change to a file the command line does not name changes nothing.
func TestDiscoverPinsWhatAServerRuns(t *testing.T) {
	type server struct {
		command string
		args    []string
		env     map[string]string
	}
	cases := []struct {
		name   string
		files  map[string]string
		links  map[string]string // link → target
		server func(ws string) server
		change func(t *testing.T, ws string) // what must ask again
		pinned string                        // in the changes' pin line
	}{
		{"interpreter and script", map[string]string{"mcp/srv.py": "print(1)"}, nil,
			func(string) server { return server{command: "python3", args: []string{"mcp/srv.py"}} },
			func(t *testing.T, ws string) { write(t, ws, "mcp/srv.py", "import os; os.system('evil')") }, "mcp/srv.py"},
		{"node script by absolute path", map[string]string{"x.js": "1"}, nil,
			func(ws string) server { return server{command: "node", args: []string{filepath.Join(ws, "x.js")}} },
			func(t *testing.T, ws string) { write(t, ws, "x.js", "2") }, "x.js"},
		{"a program with a slash", map[string]string{"bin/srv": "#!/bin/sh\n"}, nil,
			func(string) server { return server{command: "./bin/srv"} },
			func(t *testing.T, ws string) { write(t, ws, "bin/srv", "#!/bin/sh\nevil\n") }, "bin/srv"},
		{"a program on a PATH in the workspace", map[string]string{"bin/srv": "#!/bin/sh\n"}, nil,
			func(ws string) server {
				return server{command: "srv", env: map[string]string{"PATH": filepath.Join(ws, "bin") + ":/usr/bin:/bin"}}
			},
			func(t *testing.T, ws string) { write(t, ws, "bin/srv", "#!/bin/sh\nevil\n") }, "bin/srv"},
		{"a PATH entry that could shadow the program", map[string]string{"README": "x"}, nil,
			func(ws string) server {
				return server{command: "sh", env: map[string]string{"PATH": "tools/bin:/usr/bin:/bin"}}
			},
			func(t *testing.T, ws string) { write(t, ws, "tools/bin/sh", "#!/bin/sh\nevil\n") }, ""},
		{"sh -c", map[string]string{"mcp/srv.py": "print(1)"}, nil,
			func(string) server {
				return server{command: "sh", args: []string{"-c", "echo hi >&2; exec python3 'mcp/srv.py' --stdio"}}
			},
			func(t *testing.T, ws string) { write(t, ws, "mcp/srv.py", "print(2)") }, "mcp/srv.py"},
		{"a folder", map[string]string{"mcp/index.js": "1", "mcp/lib/a.js": "2"}, nil,
			func(string) server { return server{command: "node", args: []string{"mcp"}} },
			func(t *testing.T, ws string) { write(t, ws, "mcp/lib/a.js", "evil") }, "mcp/"},
		{"a new file in a folder", map[string]string{"mcp/index.js": "1"}, nil,
			func(string) server { return server{command: "node", args: []string{"mcp/"}} },
			func(t *testing.T, ws string) { write(t, ws, "mcp/node_modules/x.js", "evil") }, "mcp/"},
		{"a link to the script", map[string]string{"mcp/real.py": "1", "mcp/other.py": "1"}, map[string]string{"mcp/srv.py": "real.py"},
			func(string) server { return server{command: "python3", args: []string{"mcp/srv.py"}} },
			func(t *testing.T, ws string) {
				os.Remove(filepath.Join(ws, "mcp/srv.py"))
				if err := os.Symlink("other.py", filepath.Join(ws, "mcp/srv.py")); err != nil {
					t.Fatal(err)
				}
			}, "mcp/real.py"},
		{"the script behind the link", map[string]string{"mcp/real.py": "1"}, map[string]string{"mcp/srv.py": "real.py"},
			func(string) server { return server{command: "python3", args: []string{"mcp/srv.py"}} },
			func(t *testing.T, ws string) { write(t, ws, "mcp/real.py", "2") }, "mcp/real.py"},
		{"--config=FILE", map[string]string{"conf/srv.json": "{}"}, nil,
			func(string) server { return server{command: "srv", args: []string{"--config=conf/srv.json"}} },
			func(t *testing.T, ws string) { write(t, ws, "conf/srv.json", `{"evil": 1}`) }, "conf/srv.json"},
		{"python -m", map[string]string{"pkg/__main__.py": "1"}, nil,
			func(string) server { return server{command: "python3", args: []string{"-m", "pkg.server"}} },
			func(t *testing.T, ws string) { write(t, ws, "pkg/__main__.py", "2") }, "pkg/"},
		{"a script made later", map[string]string{"README": "x"}, nil,
			func(string) server { return server{command: "python3", args: []string{"gen/srv.py"}} },
			func(t *testing.T, ws string) { write(t, ws, "gen/srv.py", "evil") }, ""},
		{"an env value", map[string]string{"lib/boot.js": "1"}, nil,
			func(string) server {
				return server{command: "node", args: []string{"-e", "0"}, env: map[string]string{"NODE_OPTIONS": "--require ./lib/boot.js"}}
			},
			func(t *testing.T, ws string) { write(t, ws, "lib/boot.js", "evil") }, "lib/boot.js"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			for name, body := range c.files {
				write(t, ws, name, body)
			}
			for link, target := range c.links {
				if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
					t.Fatal(err)
				}
			}
			write(t, ws, "unrelated.txt", "1")
			s := c.server(ws)
			write(t, ws, "deployment.json", deploymentWith(s.command, s.args, s.env))
			f := discoverAt(t, ws, nil)
			if !f.Usable() {
				t.Fatalf("problems: %v", f.Problems)
			}
			all, _ := changeText(f, nil)
			if c.pinned != "" && !strings.Contains(all, "deployment.json's MCP server s runs the workspace's "+c.pinned) {
				t.Errorf("the changes do not say %s is pinned:\n%s", c.pinned, all)
			}
			verify := f.Deployment.MCPServers["s"].Verify
			if verify == nil {
				t.Fatal("no Verify on the workspace's server")
			}
			if err := verify(); err != nil {
				t.Fatalf("unchanged, Verify says %v", err)
			}
			write(t, ws, "unrelated.txt", "2")
			if g := discoverAt(t, ws, nil); g.Hash != f.Hash {
				t.Error("a file the command line does not name changed the hash")
			}
			c.change(t, ws)
			if g := discoverAt(t, ws, nil); g.Hash == f.Hash {
				t.Error("the change kept the hash: the old decision would run the new program")
			}
			if err := verify(); err == nil || !strings.Contains(err.Error(), "changed since you trusted the workspace") {
				t.Errorf("after the change, Verify says %v", err)
			}
		})
	}
}

// write puts body at name in the workspace ws, executable (a server
// program may be one), making its folders.
func write(t *testing.T, ws, name, body string) {
	t.Helper()
	p := filepath.Join(ws, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func deploymentWith(command string, args []string, env map[string]string) string {
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	var a, e []string
	for _, x := range args {
		a = append(a, q(x))
	}
	for k, v := range env {
		e = append(e, q(k)+": "+q(v))
	}
	return fmt.Sprintf(`{"mcpServers": {"s": {"command": %s, "args": [%s], "env": {%s}}}}`, q(command), strings.Join(a, ", "), strings.Join(e, ", "))
}

// What cannot be pinned cannot be trusted, and the workspace itself is
// named as unpinned rather than hashed whole.
func TestDiscoverPinBounds(t *testing.T) {
	t.Run("a folder past the bound", func(t *testing.T) {
		ws := t.TempDir()
		for i := 0; i < pinEntries+1; i++ {
			write(t, ws, fmt.Sprintf("big/%d.js", i), "x")
		}
		write(t, ws, "deployment.json", deploymentWith("node", []string{"big"}, nil))
		f := discoverAt(t, ws, nil)
		if f.Usable() || len(f.Problems) != 1 || !strings.Contains(f.Problems[0].Error(), "mcpServers.s: cannot pin \"big\"") ||
			!strings.Contains(f.Problems[0].Error(), "more than the pinning budget") {
			t.Fatalf("problems %v", f.Problems)
		}
	})
	t.Run("the records folder", func(t *testing.T) {
		ws := t.TempDir()
		write(t, ws, ".orchestration/runs/x.py", "x")
		write(t, ws, "deployment.json", deploymentWith("python3", []string{".orchestration/runs/x.py"}, nil))
		if f := discoverAt(t, ws, nil); f.Usable() {
			t.Fatal("a server run from .orchestration was usable")
		}
	})
	t.Run("a FIFO is not opened", func(t *testing.T) {
		ws := t.TempDir()
		write(t, ws, "mcp/a.js", "x")
		if err := mkfifo(filepath.Join(ws, "mcp/pipe")); err != nil {
			t.Skip(err)
		}
		write(t, ws, "deployment.json", deploymentWith("node", []string{"mcp"}, nil))
		if f := discoverAt(t, ws, nil); !f.Usable() {
			t.Fatalf("problems %v", f.Problems)
		}
	})
	t.Run("a link out of the workspace", func(t *testing.T) {
		ws := t.TempDir()
		if err := os.Symlink("/bin/sh", filepath.Join(ws, "srv")); err != nil {
			t.Fatal(err)
		}
		write(t, ws, "deployment.json", deploymentWith("./srv", nil, nil))
		f := discoverAt(t, ws, nil)
		if !f.Usable() {
			t.Fatalf("problems %v", f.Problems)
		}
		os.Remove(filepath.Join(ws, "srv"))
		os.Symlink("/bin/true", filepath.Join(ws, "srv"))
		if g := discoverAt(t, ws, nil); g.Hash == f.Hash {
			t.Error("a retargeted link kept the hash")
		}
	})
	t.Run("the workspace itself", func(t *testing.T) {
		ws := t.TempDir()
		write(t, ws, "README", "x")
		write(t, ws, "deployment.json", deploymentWith("node", []string{"."}, nil))
		f := discoverAt(t, ws, nil)
		_, warned := changeText(f, nil)
		if !strings.Contains(warned, "MCP server s is given the workspace folder itself") {
			t.Errorf("no warning in:\n%s", warned)
		}
		write(t, ws, "README", "y")
		if g := discoverAt(t, ws, nil); g.Hash != f.Hash {
			t.Error("the whole workspace was hashed")
		}
	})
}

// A workspace without MCP servers keeps the hash it had before programs
// were pinned: the operator is not asked again for nothing.
func TestHashOfConfigurationFilesIsUnchanged(t *testing.T) {
	f, _ := discoverIn(t, map[string]string{"deployment.json": `{"executor": {"maxAgentDepth": 3}}`}, nil)
	if len(f.Files) != 1 {
		t.Fatalf("hash %q files %v", f.Hash, f.Files)
	}
	if got := legacyHash(map[string][]byte{"deployment.json": []byte(`{"executor": {"maxAgentDepth": 3}}`)}); got != f.Hash {
		t.Errorf("hash %s, the old formula gives %s", f.Hash, got)
	}
}

// legacyHash is the trust hash as it was computed before programs were
// pinned (hashFiles of the first release), kept to check compatibility.
// It is written out rather than built on digestOf, so that a change there
// fails the check instead of moving both sides.
func legacyHash(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		fmt.Fprintf(h, "%s\x00%x\n", n, sum)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
