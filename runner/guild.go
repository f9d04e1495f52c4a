package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/guildhall/guildhall/tools"
)

// Role is one role of a guild.
type Role struct {
	Name         string   `json:"-"`
	SystemPrompt string   `json:"systemPrompt"`
	Tools        []string `json:"tools"`
	// IncludeReasoning sends the role's earlier reasoning back to the model
	// on later turns. Absent, it does: the original system always sends
	// reasoning back (it removed the flag), and its guilds are written for
	// that. false keeps it out of the requests.
	IncludeReasoning *bool `json:"includeReasoning,omitempty"`
	// StyleGuide is the path, relative to the guild folder, of the style
	// file appended to the role's prompt; "" for none. guild.json gives it
	// as a path (the original's form) or as true, Guildhall's shorthand
	// for prompts/style.md.
	StyleGuide   string        `json:"-"`
	ProjectDocs  []string      `json:"projectDocs,omitempty"`
	Label        *tools.Tiered `json:"label,omitempty"`
	Description  *tools.Tiered `json:"description,omitempty"`
	WorkingLabel *tools.Tiered `json:"workingLabel,omitempty"`
	// Model names the deployment's model the role runs on (one of
	// deployment.json's models); "" runs it on the model block. The
	// deployment is checked against it at start (CheckAgainstGuild).
	Model string `json:"model,omitempty"`

	// Prompt is the loaded system prompt, with the style guide appended
	// when the role names one.
	Prompt string `json:"-"`
}

// ReplaysReasoning reports whether the role's earlier reasoning is sent
// back to the model.
func (r *Role) ReplaysReasoning() bool { return r.IncludeReasoning == nil || *r.IncludeReasoning }

// Grants reports whether the role may call tool.
func (r *Role) Grants(tool string) bool {
	for _, t := range r.Tools {
		if t == tool {
			return true
		}
	}
	return false
}

// Guild is a loaded, validated guild: behaviour as data.
type Guild struct {
	// Source names where the guild came from, for messages.
	Source string
	// Path is where it was loaded from, as run records keep it: an
	// absolute folder, or "seed" for the embedded seed guild. The loader's
	// caller sets it.
	Path string
	// Hash is the SHA-256 over every file the load read (names and
	// contents): a run records it, and a resume warns when it changed.
	Hash          string
	EntryRole     string
	Roles         map[string]*Role
	Manifests     map[string]tools.Manifest
	Visualization json.RawMessage
	// ConventionalDocs gives the entry role, when it declares no
	// projectDocs, the workspace's conventional instructions to agents
	// (tools.ConventionalDocs: AGENTS.md, CLAUDE.md,
	// .github/copilot-instructions.md) as its projectDocs. Guildhall sets it
	// for its own seed guilds; a guild loaded from a folder runs as its
	// author wrote it, as in the original system.
	ConventionalDocs bool
	// Warnings are what the load accepted but the operator should know,
	// each at file:line:col: keys the original system ignores (and so
	// does Guildhall), a tool declared twice. `guildhall check --strict`
	// makes them errors.
	Warnings ConfigErrors
}

// EntryDocs are the workspace files the entry role reads at run start as
// its project documentation: the ones it declares, or, with
// ConventionalDocs, the conventional ones the workspace has.
func (g *Guild) EntryDocs(ws *tools.Workspace) []string {
	if docs := g.Roles[g.EntryRole].ProjectDocs; len(docs) > 0 || !g.ConventionalDocs {
		return docs
	}
	return tools.PresentConventionalDocs(ws)
}

// RoleNames lists the roles, sorted.
func (g *Guild) RoleNames() []string {
	return slices.Sorted(maps.Keys(g.Roles))
}

// Where the original system ignores unknown keys (the guild's top level,
// tool manifests, label tiers), Guildhall warns; everywhere else an
// unknown key is an error. A key close to a known one is an error
// everywhere: it is a typo, and ignoring it would silently drop a setting.
var tieredShape = shape{"detailed": nil, "friendly": nil, "whimsical": nil, lenientKey: nil}

var guildShape = shape{
	"entryRole": nil,
	"roles": shape{"*": shape{
		"systemPrompt":     nil,
		"tools":            nil,
		"includeReasoning": nil,
		"styleGuide":       nil,
		"projectDocs":      nil,
		"label":            tieredShape,
		"description":      tieredShape,
		"workingLabel":     tieredShape,
		"model":            nil,
	}},
	"tools":         nil,
	"visualization": nil,
	lenientKey:      nil,
}

var manifestShape = shape{
	"name": nil, "description": nil, "parameters": nil,
	"humanLabel": tieredShape, "humanDescription": tieredShape,
	"humanCallLabel": tieredShape, "humanWorkingLabel": tieredShape,
	lenientKey: nil,
}

// deploymentKeys are keys that belong in deployment.json; a guild carrying
// them was written for an older format.
var deploymentKeys = []string{"model", "executor", "contextPolicy", "schemaVersion", "budgets", "logging"}

// defaultStyleGuide is the file styleGuide: true names.
const defaultStyleGuide = "prompts/style.md"

// maxStyleGuide caps a style file. It is appended to the prompt of every
// role that names it: the original's is a few kilobytes, and 64 KiB
// (some 16k tokens) is already most of a small model's window.
const maxStyleGuide = 64 << 10

// LoadGuild reads and validates a guild folder: guild.json, prompts and
// tool manifests, with paths relative to the folder, which is fsys's root.
// source names the folder in messages. Every problem found is returned,
// each at file:line:col.
func LoadGuild(fsys fs.FS, source string) (*Guild, error) {
	return LoadGuildIn(fsys, ".", source)
}

// LoadGuildIn is LoadGuild for a guild in the folder dir of fsys: paths in
// the guild resolve against dir, and may lead out of it, but never out of
// fsys. A workspace's guild is loaded this way from the workspace's
// contained reader, so that a style file can be one of the workspace's.
func LoadGuildIn(fsys fs.FS, dir, source string) (*Guild, error) {
	rec := &hashingFS{FS: fsys, dir: dir}
	l := &guildLoader{files: guildFiles{fsys: rec, dir: dir, source: source}}
	g, err := l.load()
	if err != nil {
		return nil, err
	}
	g.Hash = rec.sum()
	return g, nil
}

// guildFiles resolves and reads the files a guild names.
type guildFiles struct {
	fsys   fs.FS
	dir    string
	source string // the guild folder as messages name it
}

// name resolves p, a path relative to the guild folder (a leading "/" or
// "./" is dropped, as the original's path.join drops it), to a name in
// fsys; ok is false when it leads out of fsys.
func (gf guildFiles) name(p string) (string, bool) {
	name := path.Join(gf.dir, strings.TrimLeft(p, "/"))
	return name, fs.ValidPath(name) && name != "."
}

// display names p for a message, as a file beside guild.json.
func (gf guildFiles) display(p string) string { return path.Join(gf.source, p) }

// outside names what a path may not leave.
func (gf guildFiles) outside() string {
	if gf.dir == "." {
		return "the guild folder"
	}
	return "the workspace"
}

func (gf guildFiles) read(p string) ([]byte, error) {
	name, ok := gf.name(p)
	if !ok {
		return nil, fmt.Errorf("it leads outside %s; paths are relative to the guild folder", gf.outside())
	}
	b, err := fs.ReadFile(gf.fsys, name)
	if err != nil {
		return nil, errors.New(readProblem(err))
	}
	return b, nil
}

// guildLoader is one load of a guild: the files, the checker of guild.json
// and what has been built so far.
type guildLoader struct {
	files    guildFiles
	c        *checker
	root     *jnode
	g        *Guild
	defaults map[string]tools.Manifest
	styles   map[string]string // style guides read, by path
}

func (l *guildLoader) load() (*Guild, error) {
	file := l.files.display("guild.json")
	data, err := l.files.read("guild.json")
	if err != nil {
		return nil, &ConfigError{File: file, Msg: "cannot read guild.json: " + err.Error() + "; a guild folder must contain guild.json"}
	}
	root, err := parsePositioned(file, data)
	if err != nil {
		return nil, err
	}
	l.c, l.root = &checker{file: file, data: data}, root
	if root.kind != '{' {
		l.c.errorf(root.offset, "guild.json must be a JSON object with entryRole and roles")
		return nil, l.c.errs
	}
	if l.defaults, err = tools.DefaultManifests(); err != nil {
		return nil, fmt.Errorf("load built-in tool manifests: %w", err)
	}
	l.g = &Guild{Source: l.files.source, Roles: map[string]*Role{}, Manifests: map[string]tools.Manifest{}}
	l.topLevel()
	l.manifests() // first, so roles can be checked against them
	l.roles()
	l.crossChecks()
	if len(l.c.errs) > 0 {
		sortErrors(l.c.errs)
		return nil, l.c.errs
	}
	sortErrors(l.c.warns)
	l.g.Warnings = l.c.warns
	return l.g, nil
}

// topLevel checks guild.json's keys and reads entryRole and visualization.
func (l *guildLoader) topLevel() {
	c, root := l.c, l.root
	for _, k := range deploymentKeys {
		if root.field(k) != nil {
			c.errorf(root.keyOffset(k), "%q is a deployment setting, not part of a guild; move it to deployment.json (see docs/guild.md)", k)
		}
	}
	filtered := *root
	filtered.keys = nil
	for _, f := range root.keys {
		if !contains(deploymentKeys, f.key) {
			filtered.keys = append(filtered.keys, f)
		}
	}
	c.checkShape(&filtered, guildShape, "guild")
	if n := root.field("entryRole"); n == nil {
		c.errorf(root.offset, "guild.json has no entryRole; name the role that receives the task")
	} else {
		c.decodeInto(n, &l.g.EntryRole, "entryRole")
	}
	if v := root.field("visualization"); v != nil {
		l.g.Visualization = v.raw
	}
}

// manifests loads the declared tool manifests. A tool declared twice is
// the last declaration, as in the original, with a warning.
func (l *guildLoader) manifests() {
	tn := l.root.field("tools")
	var paths []string
	if tn == nil || !l.c.decodeInto(tn, &paths, "tools") {
		return
	}
	declaredAt := map[string]int64{}
	for i, p := range paths {
		m, warns, err := loadManifest(l.files, p)
		l.c.warns = append(l.c.warns, warns...)
		var ce ConfigErrors
		switch {
		case errors.As(err, &ce):
			l.c.errs = append(l.c.errs, ce...)
			continue
		case err != nil:
			l.c.errorf(tn.items[i].offset, "tool manifest %q: %v", p, err)
			continue
		}
		if strings.Contains(m.Name, ".") {
			l.c.errorf(tn.items[i].offset, "tool manifest %q names tool %q: a name with a '.' is an MCP server's tool (server.tool), which the server describes itself; name the tool with letters, digits, '_' and '-'", p, m.Name)
			continue
		}
		if first, dup := declaredAt[m.Name]; dup {
			line, col := lineCol(l.c.data, first)
			l.c.warnf(tn.items[i].offset, "tool %q is declared again (first at %d:%d); this later declaration is the one used, as in the original system", m.Name, line, col)
		}
		l.g.Manifests[m.Name] = m
		declaredAt[m.Name] = tn.items[i].offset
	}
}

// roles reads every role: its prompt and style guide, and its tools.
func (l *guildLoader) roles() {
	c, rolesNode := l.c, l.root.field("roles")
	if rolesNode == nil || len(rolesNode.keys) == 0 {
		c.errorf(l.root.offset, "guild.json declares no roles; add at least the entry role under \"roles\"")
	}
	if rolesNode == nil || rolesNode.kind != '{' {
		return
	}
	for _, f := range rolesNode.keys {
		r := &Role{Name: f.key}
		where := keyPath("roles", f.key)
		if !c.decodeInto(f.value, r, where) {
			continue
		}
		l.g.Roles[f.key] = r
		if r.Model != "" && !ValidModelName(r.Model) {
			c.errorf(f.value.field("model").offset, "role %q: model %q is not a model name: name one of deployment.json's models (letters, digits, '-' and '_')", f.key, r.Model)
		}
		r.StyleGuide = l.styleGuidePath(f.value.field("styleGuide"), where)
		l.prompt(f, r)
		if f.value.field("tools") == nil {
			c.errorf(f.offset, "role %q has no tools list; every role needs at least finish", f.key)
		}
		for i, t := range r.Tools {
			if _, _, mcpTool := parseMCPName(t); mcpTool {
				// An MCP server's tool: the deployment declares the
				// server (CheckAgainstGuild), the server itself the tool.
				if msg := mcpNameProblem(t); msg != "" {
					c.errorf(f.value.field("tools").items[i].offset, "role %q grants %q: %s", f.key, t, msg)
				}
				continue
			}
			if _, ok := l.g.Manifests[t]; ok {
				continue
			}
			if m, ok := l.defaults[t]; ok {
				l.g.Manifests[t] = m
				continue
			}
			c.errorf(f.value.field("tools").items[i].offset, "role %q grants tool %q, which no manifest declares and is not built in; declare it under \"tools\", grant an MCP server's tool as server.tool, or remove it", f.key, t)
		}
	}
}

// prompt reads the role's system prompt and appends its style guide.
func (l *guildLoader) prompt(f jfield, r *Role) {
	c := l.c
	if r.SystemPrompt == "" {
		c.errorf(f.offset, "role %q has no systemPrompt; give the path of its prompt file", f.key)
	} else if b, err := l.files.read(r.SystemPrompt); err != nil {
		c.errorf(f.value.field("systemPrompt").offset, "role %q: cannot read system prompt %q: %v", f.key, r.SystemPrompt, err)
	} else {
		r.Prompt = string(b)
	}
	if r.StyleGuide == "" {
		return
	}
	style, err := l.style(r.StyleGuide)
	if err != nil {
		c.errorf(f.value.field("styleGuide").offset, "role %q: cannot read style guide %q: %v", f.key, r.StyleGuide, err)
		return
	}
	// As in the original: the prompt without its trailing whitespace, one
	// blank line, then the style file as it is.
	r.Prompt = strings.TrimRightFunc(r.Prompt, unicode.IsSpace) + "\n\n" + style
}

// styleGuidePath reads a role's styleGuide: a path, true for
// prompts/style.md, false or absent for none.
func (l *guildLoader) styleGuidePath(n *jnode, where string) string {
	if n == nil {
		return ""
	}
	switch n.kind {
	case 'b':
		if n.str == "true" {
			return defaultStyleGuide
		}
		return ""
	case 's':
		if strings.TrimSpace(n.str) == "" {
			l.c.errorf(n.offset, "%s.styleGuide is empty; give the path of a style file relative to the guild folder, or true for %s", where, defaultStyleGuide)
			return ""
		}
		return n.str
	}
	l.c.errorf(n.offset, "%s.styleGuide must be the path of a style file (a string) or true for %s, not a JSON %s", where, defaultStyleGuide, kindName(n.kind))
	return ""
}

// style reads a style guide once, however many roles name it.
func (l *guildLoader) style(p string) (string, error) {
	if s, ok := l.styles[p]; ok {
		return s, nil
	}
	b, err := l.files.read(p)
	if err != nil {
		return "", err
	}
	if len(b) > maxStyleGuide {
		return "", fmt.Errorf("the file is %d bytes, more than the %d a style guide may hold (it is appended to the role's system prompt)", len(b), maxStyleGuide)
	}
	if l.styles == nil {
		l.styles = map[string]string{}
	}
	l.styles[p] = string(b)
	return string(b), nil
}

// crossChecks are the checks across roles: the entry role exists, and
// only it reads project documentation.
func (l *guildLoader) crossChecks() {
	g, c := l.g, l.c
	if g.EntryRole != "" && len(g.Roles) > 0 && g.Roles[g.EntryRole] == nil {
		c.errorf(l.root.field("entryRole").offset, "entryRole %q is not a role of this guild; roles are %s", g.EntryRole, quotedNames(g.RoleNames()))
	}
	for _, name := range g.RoleNames() {
		if len(g.Roles[name].ProjectDocs) > 0 && name != g.EntryRole {
			c.errorf(l.root.field("roles").field(name).field("projectDocs").offset, "role %q declares projectDocs, but only the entry role reads project documentation", name)
		}
	}
}

func kindName(k byte) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case 'n':
		return "number"
	case '0':
		return "null"
	case 'b':
		return "bool"
	}
	return "string"
}

// hashingFS records every file a guild load reads, so the guild's Hash
// covers exactly what it was built from.
type hashingFS struct {
	fs.FS
	dir   string // the guild folder: its files are hashed by their names in it
	files map[string][32]byte
}

func (h *hashingFS) ReadFile(name string) ([]byte, error) {
	b, err := fs.ReadFile(h.FS, name)
	if err == nil {
		if h.files == nil {
			h.files = map[string][32]byte{}
		}
		if h.dir != "." {
			if rel, ok := strings.CutPrefix(name, h.dir+"/"); ok {
				name = rel
			} else {
				name = "/" + name // outside the guild folder: never equal to a name in it
			}
		}
		h.files[name] = sha256.Sum256(b)
	}
	return b, err
}

func (h *hashingFS) sum() string {
	names := slices.Sorted(maps.Keys(h.files))
	sum := sha256.New()
	for _, n := range names {
		f := h.files[n]
		fmt.Fprintf(sum, "%s\x00%x\n", n, f[:])
	}
	return "sha256:" + hex.EncodeToString(sum.Sum(nil))
}

// readProblem says why a guild file could not be read: missing (paths are
// relative to the guild folder), or the reason the file system gave — a
// link that leads out of the workspace, a file too large.
func readProblem(err error) string {
	var wpe *tools.PathError // the workspace's reader
	if errors.Is(err, fs.ErrNotExist) || errors.As(err, &wpe) && wpe.Kind == tools.KindNotFound {
		return "it does not exist; paths are relative to the guild folder"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// loadManifest reads one tool manifest. Its warnings are returned even
// with errors.
func loadManifest(files guildFiles, p string) (tools.Manifest, ConfigErrors, error) {
	file := files.display(p)
	data, err := files.read(p)
	if err != nil {
		return tools.Manifest{}, nil, fmt.Errorf("cannot read it: %w", err)
	}
	root, err := parsePositioned(file, data)
	if err != nil {
		return tools.Manifest{}, nil, ConfigErrors{err.(*ConfigError)}
	}
	c := &checker{file: file, data: data}
	c.checkShape(root, manifestShape, "manifest")
	var m tools.Manifest
	c.decodeInto(root, &m, "manifest")
	if m.Name == "" {
		c.errorf(root.offset, "manifest has no name")
	}
	if len(m.Parameters) == 0 {
		c.errorf(root.offset, "manifest %q has no parameters schema; use {\"type\":\"object\",\"properties\":{}} for none", m.Name)
	} else if _, err := compileSchema(m.Parameters); err != nil {
		c.errorf(root.field("parameters").offset, "manifest %q: parameters is not a valid JSON Schema: %v", m.Name, err)
	}
	if len(c.errs) > 0 {
		return m, c.warns, c.errs
	}
	return m, c.warns, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortErrors(es ConfigErrors) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].File != es[j].File {
			return es[i].File < es[j].File
		}
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Col < es[j].Col
	})
}
