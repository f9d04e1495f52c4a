package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/guildhall/guildhall/tools"
)

// Role is one role of a guild.
type Role struct {
	Name             string        `json:"-"`
	SystemPrompt     string        `json:"systemPrompt"`
	Tools            []string      `json:"tools"`
	IncludeReasoning bool          `json:"includeReasoning,omitempty"`
	StyleGuide       bool          `json:"styleGuide,omitempty"`
	ProjectDocs      []string      `json:"projectDocs,omitempty"`
	Label            *tools.Tiered `json:"label,omitempty"`
	Description      *tools.Tiered `json:"description,omitempty"`
	WorkingLabel     *tools.Tiered `json:"workingLabel,omitempty"`

	// Prompt is the loaded system prompt, with the style guide appended
	// when StyleGuide is set.
	Prompt string `json:"-"`
}

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
}

// RoleNames lists the roles, sorted.
func (g *Guild) RoleNames() []string {
	names := make([]string, 0, len(g.Roles))
	for n := range g.Roles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var tieredShape = shape{"detailed": nil, "friendly": nil, "whimsical": nil}

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
	}},
	"tools":         nil,
	"visualization": nil,
}

var manifestShape = shape{
	"name": nil, "description": nil, "parameters": nil,
	"humanLabel": tieredShape, "humanDescription": tieredShape,
	"humanCallLabel": tieredShape, "humanWorkingLabel": tieredShape,
}

// deploymentKeys are keys that belong in deployment.json; a guild carrying
// them was written for an older format.
var deploymentKeys = []string{"model", "executor", "contextPolicy", "schemaVersion", "budgets"}

// LoadGuild reads and validates a guild folder: guild.json, prompts and
// tool manifests, with paths relative to the folder. source names the folder
// in error messages. Every problem found is returned, each at file:line:col.
func LoadGuild(fsys fs.FS, source string) (*Guild, error) {
	rec := &hashingFS{FS: fsys}
	fsys = rec
	file := path.Join(source, "guild.json")
	data, err := fs.ReadFile(fsys, "guild.json")
	if err != nil {
		return nil, &ConfigError{File: file, Msg: "cannot read guild.json: " + errors.Unwrap(err).Error() + "; a guild folder must contain guild.json"}
	}
	root, err := parsePositioned(file, data)
	if err != nil {
		return nil, err
	}
	c := &checker{file: file, data: data}
	if root.kind != '{' {
		c.errorf(root.offset, "guild.json must be a JSON object with entryRole and roles")
		return nil, c.errs
	}
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

	g := &Guild{Source: source, Roles: map[string]*Role{}, Manifests: map[string]tools.Manifest{}}
	if n := root.field("entryRole"); n == nil {
		c.errorf(root.offset, "guild.json has no entryRole; name the role that receives the task")
	} else {
		c.decodeInto(n, &g.EntryRole, "entryRole")
	}
	if v := root.field("visualization"); v != nil {
		g.Visualization = v.raw
	}

	// Declared manifests first, so roles can be checked against them.
	declaredAt := map[string]int64{}
	if tn := root.field("tools"); tn != nil {
		var paths []string
		if c.decodeInto(tn, &paths, "tools") {
			for i, p := range paths {
				m, err := loadManifest(fsys, source, p)
				if err != nil {
					var ce ConfigErrors
					if errors.As(err, &ce) {
						c.errs = append(c.errs, ce...)
					} else {
						c.errorf(tn.items[i].offset, "tool manifest %q: %v", p, err)
					}
					continue
				}
				if _, dup := g.Manifests[m.Name]; dup {
					c.errorf(tn.items[i].offset, "tool %q is declared twice; keep one manifest", m.Name)
				}
				g.Manifests[m.Name] = m
				declaredAt[m.Name] = tn.items[i].offset
			}
		}
	}
	defaults, err := tools.DefaultManifests()
	if err != nil {
		return nil, fmt.Errorf("load built-in tool manifests: %w", err)
	}

	rolesNode := root.field("roles")
	if rolesNode == nil || len(rolesNode.keys) == 0 {
		c.errorf(root.offset, "guild.json declares no roles; add at least the entry role under \"roles\"")
	}
	styleGuide, styleErr := fs.ReadFile(fsys, "prompts/style.md")
	if rolesNode != nil && rolesNode.kind == '{' {
		for _, f := range rolesNode.keys {
			r := &Role{Name: f.key}
			if !c.decodeInto(f.value, r, keyPath("roles", f.key)) {
				continue
			}
			g.Roles[f.key] = r
			if r.SystemPrompt == "" {
				c.errorf(f.offset, "role %q has no systemPrompt; give the path of its prompt file", f.key)
			} else if b, err := fs.ReadFile(fsys, cleanRel(r.SystemPrompt)); err != nil {
				c.errorf(f.value.field("systemPrompt").offset, "role %q: cannot read system prompt %q: %s", f.key, r.SystemPrompt, readProblem(err))
			} else {
				r.Prompt = string(b)
			}
			if r.StyleGuide {
				if styleErr != nil {
					c.errorf(f.value.field("styleGuide").offset, "role %q sets styleGuide but prompts/style.md is missing", f.key)
				} else {
					r.Prompt = strings.TrimRight(r.Prompt, "\n") + "\n\n" + string(styleGuide)
				}
			}
			if f.value.field("tools") == nil {
				c.errorf(f.offset, "role %q has no tools list; every role needs at least finish", f.key)
			}
			for i, t := range r.Tools {
				if _, ok := g.Manifests[t]; ok {
					continue
				}
				if m, ok := defaults[t]; ok {
					g.Manifests[t] = m
					continue
				}
				c.errorf(f.value.field("tools").items[i].offset, "role %q grants tool %q, which no manifest declares and is not built in; declare it under \"tools\" or remove it", f.key, t)
			}
		}
	}
	if g.EntryRole != "" && len(g.Roles) > 0 && g.Roles[g.EntryRole] == nil {
		c.errorf(root.field("entryRole").offset, "entryRole %q is not a role of this guild; roles are %s", g.EntryRole, quotedNames(g.RoleNames()))
	}
	for name, r := range g.Roles {
		if len(r.ProjectDocs) > 0 && name != g.EntryRole {
			c.errorf(rolesNode.field(name).field("projectDocs").offset, "role %q declares projectDocs, but only the entry role reads project documentation", name)
		}
	}
	_ = declaredAt
	if len(c.errs) > 0 {
		sortErrors(c.errs)
		return nil, c.errs
	}
	g.Hash = rec.sum()
	return g, nil
}

// hashingFS records every file a guild load reads, so the guild's Hash
// covers exactly what it was built from.
type hashingFS struct {
	fs.FS
	files map[string][32]byte
}

func (h *hashingFS) ReadFile(name string) ([]byte, error) {
	b, err := fs.ReadFile(h.FS, name)
	if err == nil {
		if h.files == nil {
			h.files = map[string][32]byte{}
		}
		h.files[name] = sha256.Sum256(b)
	}
	return b, err
}

func (h *hashingFS) sum() string {
	names := make([]string, 0, len(h.files))
	for n := range h.files {
		names = append(names, n)
	}
	sort.Strings(names)
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
	if errors.Is(err, fs.ErrNotExist) {
		return "it does not exist; paths are relative to the guild folder"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

func loadManifest(fsys fs.FS, source, p string) (tools.Manifest, error) {
	file := path.Join(source, p)
	data, err := fs.ReadFile(fsys, cleanRel(p))
	if err != nil {
		return tools.Manifest{}, fmt.Errorf("cannot read it: %s", readProblem(err))
	}
	root, err := parsePositioned(file, data)
	if err != nil {
		return tools.Manifest{}, ConfigErrors{err.(*ConfigError)}
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
		return m, c.errs
	}
	return m, nil
}

func cleanRel(p string) string {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	return strings.TrimPrefix(p, "/")
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
