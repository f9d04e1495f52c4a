package trust

// An MCP server a workspace declares is a program the workspace ships
// (`python3 mcp/srv.py`): trusting the deployment file that names it is
// trusting that program as it is now. So the workspace files its command
// line names are pinned with the configuration files: their contents go
// into the trust hash, and a change to them asks again. The same pins are
// checked again before every start of the server in a run, since a
// command of the run itself may have rewritten them since the start.
//
// What is named: the program (a path, or the first match on the server's
// PATH that lies in the workspace, with every earlier match that could
// shadow it pinned as absent), and every word of the arguments and env
// values that names a workspace path (a script, a folder, a link, the file
// after --config=, the words of an `sh -c` string, the package of
// `python -m`). A folder is pinned whole; the workspace itself is not
// (it is the project), and the prompt warns when a server is given it.
// What a program finds by itself at run time (an import of a file no
// argument names) is not pinned: a workspace's server always runs in the
// sandbox, so what it runs can do no more than a command can.

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/mcp"
	"github.com/guildhall/guildhall/tools"
)

// The bound of one workspace's pins: every server together.
const (
	pinEntries = 4096
	pinBytes   = 64 << 20
	// pinWords bounds the words of one server's command line and env.
	pinWords = 256
)

// ServerPins are what one server's command line names in the workspace.
type ServerPins struct {
	Server string
	// Files are the files and folders pinned (a folder ends in "/"),
	// workspace-relative, in command-line order.
	Files []string
	// Workspace is set when the command line names the workspace itself,
	// whose contents are not pinned.
	Workspace bool

	sums map[string][32]byte
}

// digest is one server's pins as one value.
func (sp ServerPins) digest() string { return digestOf(sp.sums) }

// pinServers pins the programs of the stdio servers file declares, and
// gives each a Verify that checks the pins before it starts.
func pinServers(ws *tools.Workspace, d *runner.Deployment, file string) ([]ServerPins, error) {
	budget := &tools.PinBudget{Entries: pinEntries, Bytes: pinBytes}
	var out []ServerPins
	for _, name := range d.MCPServerNames() {
		c := d.MCPServers[name]
		if c.Origin != file || c.Transport() != mcp.Stdio {
			continue
		}
		plan := planPins(c)
		sp, err := plan.pin(ws, name, budget)
		if err != nil {
			return nil, fmt.Errorf("%s: mcpServers.%s: %w", file, name, err)
		}
		c.Verify = verifier(ws.Dir(), name, plan, sp.digest())
		d.MCPServers[name] = c
		out = append(out, sp)
	}
	return out, nil
}

// verifier checks, before a start, that the server's pins are what the
// operator trusted.
func verifier(dir, name string, plan pinPlan, want string) func() error {
	return func() error {
		ws, err := tools.OpenWorkspace(dir)
		if err != nil {
			return err
		}
		defer ws.Close()
		sp, err := plan.pin(ws, name, &tools.PinBudget{Entries: pinEntries, Bytes: pinBytes})
		if err != nil {
			return fmt.Errorf("the workspace files it runs cannot be checked: %w", err)
		}
		if sp.digest() != want {
			return fmt.Errorf("the workspace files it runs (%s) changed since you trusted the workspace, so it is not started; review them, then trust the workspace again", strings.Join(sp.Files, ", "))
		}
		return nil
	}
}

// pinPlan is what to pin for one server, worked out from its
// configuration alone, so that a check later pins the same things.
type pinPlan struct {
	program string
	// path is the PATH the server's program is looked up on, when the
	// program has no slash.
	path  []string
	words []string
}

func planPins(c mcp.Config) pinPlan {
	p := pinPlan{program: c.Command}
	if !strings.Contains(c.Command, "/") {
		v, ok := c.Env["PATH"]
		if !ok {
			v = os.Getenv("PATH") // the tool subprocesses' PATH is this one
		}
		p.path = filepath.SplitList(v)
	}
	seen := map[string]bool{}
	add := func(w string) {
		if w == "" || seen[w] || len(p.words) >= pinWords || strings.Contains(w, "://") {
			return
		}
		seen[w] = true
		p.words = append(p.words, w)
	}
	for i, a := range c.Args {
		for _, w := range words(a) {
			add(w)
		}
		if i > 0 && c.Args[i-1] == "-m" { // python -m pkg.mod runs pkg/ or pkg.py of the folder it starts in
			top, _, _ := strings.Cut(a, ".")
			add(top)
			add(top + ".py")
		}
	}
	for _, k := range mcp.Names(c.Env) {
		for _, w := range words(c.Env[k]) {
			add(w)
		}
	}
	return p
}

// words are the candidates for a path in one argument or env value: the
// value itself, what follows its first '=' (--config=FILE), and the words
// of a command string (sh -c, node -e) split at blanks, quotes and shell
// punctuation.
func words(s string) []string {
	out := []string{s}
	if _, v, ok := strings.Cut(s, "="); ok {
		out = append(out, v)
	}
	if strings.ContainsAny(s, " \t\n;|&()<>'\"`$=,:") {
		out = append(out, strings.FieldsFunc(s, func(r rune) bool {
			return strings.ContainsRune(" \t\n;|&()<>'\"`$=,:{}[]", r)
		})...)
	}
	return out
}

// pin pins what the plan names, as the workspace is now.
func (pl pinPlan) pin(ws *tools.Workspace, name string, budget *tools.PinBudget) (ServerPins, error) {
	sp := ServerPins{Server: name, sums: map[string][32]byte{}}
	shown := map[string]bool{}
	add := func(p tools.Pinned) {
		for _, e := range p.Entries {
			sp.sums["mcpServers."+name+"\x00"+e.Kind+"\x00"+e.Path] = e.Sum
		}
		show := p.Path
		switch p.What {
		case tools.PinnedFolder:
			show += "/"
		case tools.PinnedFile:
		default:
			return
		}
		if !shown[show] {
			shown[show] = true
			sp.Files = append(sp.Files, show)
		}
	}
	if err := pl.pinProgram(ws, budget, add); err != nil {
		return sp, err
	}
	for _, w := range pl.words {
		if path.Clean(filepath.ToSlash(w)) == "." || filepath.Clean(w) == filepath.Clean(ws.Dir()) {
			sp.Workspace = true
			continue
		}
		p, err := ws.Pin(w, budget, true)
		if err != nil {
			return sp, fmt.Errorf("cannot pin %q, which its command line names: %w", w, err)
		}
		if p.What == tools.PinnedAbsent && !pathLike(w) {
			continue // a word, not a file that is missing
		}
		add(p)
	}
	return sp, nil
}

// pinProgram pins the program: its path, or on the PATH every workspace
// candidate up to the one that runs (an absent one could be created and
// shadow the program found after it).
func (pl pinPlan) pinProgram(ws *tools.Workspace, budget *tools.PinBudget, add func(tools.Pinned)) error {
	if pl.path == nil {
		p, err := ws.Pin(pl.program, budget, false)
		if err != nil {
			return fmt.Errorf("cannot pin its program %q: %w", pl.program, err)
		}
		add(p)
		return nil
	}
	for _, dir := range pl.path {
		if dir == "" {
			dir = "."
		}
		cand := filepath.Join(dir, pl.program)
		host := cand // where the host finds it: a relative entry is the workspace's
		if !filepath.IsAbs(host) {
			host = filepath.Join(ws.Dir(), host)
		}
		p, err := ws.Pin(cand, budget, false)
		if err != nil {
			return fmt.Errorf("cannot pin its program %q on its PATH: %w", cand, err)
		}
		switch p.What {
		case tools.PinnedNothing: // not the workspace's
			if executable(host) {
				return nil
			}
			continue
		case tools.PinnedFile:
			add(p)
			if executable(filepath.Join(ws.Dir(), p.Path)) {
				return nil
			}
			continue
		case tools.PinnedOther: // a link out of the workspace (its target runs) or a special file
			add(p)
			if executable(host) {
				return nil
			}
			continue
		}
		add(p) // absent, or a folder of that name: either could become the program
	}
	return nil
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// pathLike reports whether a word that names nothing yet reads as a path
// (a slash, or a name with an extension): a file that a command could
// create later, so its absence is pinned.
func pathLike(w string) bool {
	if strings.HasPrefix(w, "-") {
		return false
	}
	if strings.Contains(w, "/") {
		return true
	}
	ext := filepath.Ext(w)
	if len(ext) < 2 || len(ext) > 6 || ext == w {
		return false
	}
	for i, r := range ext[1:] {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
