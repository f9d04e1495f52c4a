package runner

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/guildhall/guildhall/runner/mcp"
	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// Generation holds the default sampling parameters applied to every role.
type Generation struct {
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"maxTokens,omitempty"`
}

// ModelConfig is deployment.json's model section.
type ModelConfig struct {
	Name           string     `json:"name,omitempty"`
	APIBase        string     `json:"apiBase,omitempty"`
	ContextWindow  int        `json:"contextWindow,omitempty"`
	ReasoningField string     `json:"reasoningField,omitempty"`
	Generation     Generation `json:"generation"`
	// Provider selects the wire format (Guildhall addition): openai,
	// openai-responses, anthropic or script.
	Provider string `json:"provider,omitempty"`
	// Price is what the endpoint charges (Guildhall addition), for the
	// console's cost figure; nil shows no cost.
	Price *ModelPrice `json:"price,omitempty"`
}

// ModelPrice is an endpoint's price per million tokens, in Currency
// (default USD). CachedInput prices the cached part of a prompt; zero
// prices it as Input.
type ModelPrice struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CachedInput float64 `json:"cachedInput,omitempty"`
	Currency    string  `json:"currency,omitempty"`
}

// InterruptTriggers configures the loop-check cadence.
type InterruptTriggers struct {
	HandlerRole    string `json:"handlerRole,omitempty"`
	EveryToolCalls int    `json:"everyToolCalls,omitempty"`
	EveryTokens    int    `json:"everyTokens,omitempty"`
	PlanOwnerRole  string `json:"planOwnerRole,omitempty"`
}

// ProviderHealth configures retries and suspension (Guildhall addition).
type ProviderHealth struct {
	// Retries is how many times one request is attempted before the
	// failure counts against the provider (default 3).
	Retries int `json:"retries,omitempty"`
	// SuspendAfter is the number of consecutive failed requests after which
	// the run is suspended (default 3).
	SuspendAfter int `json:"suspendAfter,omitempty"`
	// ProbeSeconds is the interval between health probes while suspended.
	ProbeSeconds int `json:"probeSeconds,omitempty"`
	// AutoResume resumes a suspended run when the provider answers again
	// (default true).
	AutoResume *bool `json:"autoResume,omitempty"`
	// RequestTimeoutSeconds bounds one model request (default 600).
	RequestTimeoutSeconds int `json:"requestTimeoutSeconds,omitempty"`
}

// ExecutorConfig is deployment.json's executor section.
type ExecutorConfig struct {
	MaxAgentDepth             int                `json:"maxAgentDepth,omitempty"`
	DefaultToolTimeoutSeconds int                `json:"defaultToolTimeoutSeconds,omitempty"`
	MaxCompactionAttempts     int                `json:"maxCompactionAttempts,omitempty"`
	ContextPressureThreshold  float64            `json:"contextPressureThreshold,omitempty"`
	ContextHandlerRole        string             `json:"contextHandlerRole,omitempty"`
	InquiryHandlerRole        string             `json:"inquiryHandlerRole,omitempty"`
	InterruptTriggers         *InterruptTriggers `json:"interruptTriggers,omitempty"`
	ProviderHealth            ProviderHealth     `json:"providerHealth"`
	// PassEnv names environment variables (exact, or a prefix ending in
	// '*') that tool subprocesses get beyond the built-in allowlist
	// (Guildhall addition; see tools.EnvAllowlist).
	PassEnv []string `json:"passEnv,omitempty"`
	// Budget ends a run that spends too much (Guildhall addition; see
	// budget.go).
	Budget Budget `json:"budget"`
}

// ContextPolicy is deployment.json's contextPolicy section.
type ContextPolicy struct {
	MaxToolOutputChars int `json:"maxToolOutputChars,omitempty"`
}

// LoggingConfig is deployment.json's logging section (the original
// system's): the default log level of runs, below the run's own choice
// and the project setting.
type LoggingConfig struct {
	// Level is "full" or "standard"; "" leaves the default, full.
	Level string `json:"level,omitempty"`
}

// WebSearchSection is deployment.json's webSearch section: where
// web_search sends queries. Kagi's key comes from the environment.
type WebSearchSection struct {
	// Provider is "searxng" or "kagi"; empty leaves web_search unavailable.
	Provider string `json:"provider,omitempty"`
	// Endpoint is the SearXNG instance's base URL (not used for Kagi).
	Endpoint string `json:"endpoint,omitempty"`
}

// Deployment holds the knobs set once per machine.
type Deployment struct {
	Model ModelConfig `json:"model"`
	// Models are further model endpoints, by name, that a guild's role
	// picks with "model": NAME (Guildhall addition; see models.go). A
	// later file replaces a model of the same name whole.
	Models        map[string]ModelConfig `json:"models,omitempty"`
	Executor      ExecutorConfig         `json:"executor"`
	ContextPolicy ContextPolicy          `json:"contextPolicy"`
	Logging       LoggingConfig          `json:"logging"`
	// Sandbox confines the subprocess tools (Guildhall addition; see
	// tools/sandbox and docs/security.md); its network allowlist also
	// governs the web tools.
	Sandbox   sandbox.Config   `json:"sandbox"`
	WebSearch WebSearchSection `json:"webSearch"`
	// MCPServers are the Model Context Protocol servers whose tools roles
	// may be granted as server.tool (Guildhall addition; see
	// runner/mcp and docs/mcp.md). A later file replaces a server of the
	// same name whole, never merging its env or headers into another's.
	MCPServers map[string]mcp.Config `json:"mcpServers,omitempty"`
	// Notify is how the console tells of a waiting question, a run's end
	// and a suspension (notify.go); a workspace's file may not set its
	// command.
	Notify NotifyConfig `json:"notify"`
	// Theme is the terminal console's colours: ThemeAuto (the default)
	// asks the terminal for its background once at start, ThemeDark and
	// ThemeLight choose (Guildhall addition; see tui/theme.go).
	Theme string `json:"theme,omitempty"`
	// Detach is how long a console whose terminal went away waits on a
	// question (detach_config.go).
	Detach DetachConfig `json:"detach"`
	// Source names the file it came from ("built-in defaults" otherwise);
	// with layered files, the last one.
	Source string `json:"-"`
	// SetBy records, for every setting a file or an override gave a value,
	// where it came from (a file name, a flag, an environment variable),
	// keyed by dotted path ("model.apiBase"). Settings absent from it are
	// built-in defaults. The key rule reads it: a key goes only to an
	// endpoint the operator chose.
	SetBy map[string]string `json:"-"`
	// Files are the deployment files layered, first to last, and Hash the
	// SHA-256 over their names and contents ("" for built-in defaults): a
	// run records it, and a resume warns when it changed.
	Files []string `json:"-"`
	Hash  string   `json:"-"`
}

// Origin is where the setting at path came from, "" for a built-in
// default.
func (d *Deployment) Origin(path string) string { return d.SetBy[path] }

// SetOrigin records that the setting at path came from source.
func (d *Deployment) SetOrigin(path, source string) {
	if d.SetBy == nil {
		d.SetBy = map[string]string{}
	}
	d.SetBy[path] = source
}

// clone copies d deeply enough that decoding another file onto the copy
// leaves d as it was.
func (d *Deployment) clone() *Deployment {
	c := *d
	if t := d.Model.Generation.Temperature; t != nil {
		v := *t
		c.Model.Generation.Temperature = &v
	}
	if it := d.Executor.InterruptTriggers; it != nil {
		v := *it
		c.Executor.InterruptTriggers = &v
	}
	if p := d.Model.Price; p != nil {
		v := *p
		c.Model.Price = &v
	}
	if a := d.Executor.ProviderHealth.AutoResume; a != nil {
		v := *a
		c.Executor.ProviderHealth.AutoResume = &v
	}
	c.Executor.PassEnv = append([]string(nil), d.Executor.PassEnv...)
	c.Models = cloneModels(d.Models)
	c.Notify = d.Notify.clone()
	if d.MCPServers != nil {
		c.MCPServers = make(map[string]mcp.Config, len(d.MCPServers))
		for k, v := range d.MCPServers {
			c.MCPServers[k] = v
		}
	}
	c.Files = append([]string(nil), d.Files...)
	c.SetBy = make(map[string]string, len(d.SetBy))
	for k, v := range d.SetBy {
		c.SetBy[k] = v
	}
	return &c
}

// The values of Deployment.Theme.
const (
	ThemeAuto  = "auto"
	ThemeDark  = "dark"
	ThemeLight = "light"
)

// defaultSource is the Source of the built-in defaults.
const defaultSource = "built-in defaults"

// DefaultDeployment is what Guildhall uses without a deployment.json. The
// handler roles are those of the seed guild; they are dropped by
// FitToGuild when a guild does not have them.
func DefaultDeployment() *Deployment {
	temp := 0.2
	return &Deployment{
		Source: defaultSource,
		Model: ModelConfig{
			Name:          "",
			APIBase:       "http://127.0.0.1:8080/v1",
			ContextWindow: 32768,
			Generation:    Generation{Temperature: &temp, MaxTokens: 4096},
			Provider:      "openai",
		},
		Executor: ExecutorConfig{
			MaxAgentDepth:             8,
			DefaultToolTimeoutSeconds: 30,
			MaxCompactionAttempts:     5,
			ContextPressureThreshold:  0.8,
			ContextHandlerRole:        "context_manager",
			InquiryHandlerRole:        "inquiry_responder",
			InterruptTriggers: &InterruptTriggers{
				HandlerRole: "loop_detector", EveryToolCalls: 12, EveryTokens: 30000, PlanOwnerRole: "planner",
			},
			Budget: budgetDefault(),
		},
		ContextPolicy: ContextPolicy{MaxToolOutputChars: 4000},
		Sandbox:       sandbox.Config{Mode: string(sandbox.WorkspaceWrite), Network: string(sandbox.NetworkOff)},
	}
}

var deploymentShape = shape{
	"model":  modelShape,
	"models": shape{"*": modelShape},
	"executor": shape{
		"maxAgentDepth": nil, "defaultToolTimeoutSeconds": nil, "maxCompactionAttempts": nil,
		"contextPressureThreshold": nil, "contextHandlerRole": nil, "inquiryHandlerRole": nil,
		"interruptTriggers": shape{"handlerRole": nil, "everyToolCalls": nil, "everyTokens": nil, "planOwnerRole": nil},
		"providerHealth":    shape{"retries": nil, "suspendAfter": nil, "probeSeconds": nil, "autoResume": nil, "requestTimeoutSeconds": nil},
		"passEnv":           nil,
		"budget":            shape{"maxToolCalls": nil, "maxTokens": nil, "maxWallSeconds": nil},
	},
	"contextPolicy": shape{"maxToolOutputChars": nil},
	"logging":       shape{"level": nil},
	"sandbox": shape{"mode": nil, "network": nil, "allow": nil, "writable": nil, "readOnly": nil,
		"limits": shape{"cpuSeconds": nil, "addressSpaceMiB": nil, "fileSizeMiB": nil, "processes": nil}},
	"webSearch": shape{"provider": nil, "endpoint": nil},
	"notify":    shape{"bell": nil, "desktop": nil, "command": nil},
	"theme":     nil,
	"detach":    shape{"idleTimeout": nil},
	"mcpServers": shape{"*": shape{
		"type": nil, "command": nil, "args": nil, "env": nil, "url": nil, "headers": nil,
		"sandbox":             shape{"mode": nil, "network": nil, "allow": nil, "writable": nil},
		"startTimeoutSeconds": nil,
	}},
}

// secretKeyNames are keys that would put a credential in a file.
var secretKeyNames = []string{"apikey", "api_key", "key", "token", "secret", "password", "authorization"}

// LoadDeployment reads and strictly validates a deployment file. Values it
// omits keep their defaults. Every problem is reported at file:line:col.
func LoadDeployment(file string) (*Deployment, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &ConfigError{File: file, Msg: "cannot read deployment file: " + err.Error()}
	}
	return ParseDeployment(file, data)
}

// ParseDeployment validates deployment JSON read from file.
func ParseDeployment(file string, data []byte) (*Deployment, error) {
	return ParseDeploymentOnto(nil, file, data)
}

// ParseDeploymentOnto validates deployment JSON read from file and applies
// it over base, a deployment already layered from other files (nil, or an
// untouched DefaultDeployment, for the built-in defaults): what file sets
// wins, what it omits keeps base's value. base is not changed.
func ParseDeploymentOnto(base *Deployment, file string, data []byte) (*Deployment, error) {
	root, err := parsePositioned(file, data)
	if err != nil {
		return nil, err
	}
	c := &checker{file: file, data: data}
	findSecrets(c, root)
	if len(c.errs) == 0 {
		c.checkShape(root, deploymentShape, "deployment")
	}
	var d *Deployment
	if base == nil || base.Source == defaultSource {
		d = DefaultDeployment()
		// Handler roles and the loop-check cadence are opt-in in a file,
		// as in the original: absent means off.
		d.Executor.InterruptTriggers = nil
		d.Executor.ContextHandlerRole = ""
		d.Executor.InquiryHandlerRole = ""
	} else {
		d = base.clone()
	}
	d.Source = file
	c.decodeInto(root, d, "deployment")
	markMCPOrigins(d, root, file)
	forgetModelOrigins(d, root)
	recordOrigins(d, root, "", file)
	d.Files = append(d.Files, file)
	sum := sha256.Sum256(data)
	chain := sha256.Sum256([]byte(d.Hash + "\x00" + file + "\x00" + hex.EncodeToString(sum[:])))
	d.Hash = "sha256:" + hex.EncodeToString(chain[:])
	checkDeploymentValues(c, root, d)
	if len(c.errs) > 0 {
		sortErrors(c.errs)
		return nil, c.errs
	}
	return d, nil
}

// recordOrigins notes file as the origin of every leaf setting under n.
func recordOrigins(d *Deployment, n *jnode, prefix, file string) {
	if n == nil {
		return
	}
	if n.kind != '{' {
		d.SetOrigin(prefix, file)
		return
	}
	for _, f := range n.keys {
		path := f.key
		if prefix != "" {
			path = prefix + "." + f.key
		}
		recordOrigins(d, f.value, path, file)
	}
}

// findSecrets refuses keys that would put a Guildhall credential in the
// file. An MCP server's env and headers are exempt: they are where the
// operator gives a server its own token, which reaches only that server
// and is redacted from every record.
func findSecrets(c *checker, n *jnode) { findSecretsAt(c, n, nil) }

func findSecretsAt(c *checker, n *jnode, path []string) {
	if n == nil {
		return
	}
	if len(path) == 3 && path[0] == "mcpServers" && (path[2] == "env" || path[2] == "headers") {
		return
	}
	for _, f := range n.keys {
		if contains(secretKeyNames, strings.ToLower(f.key)) {
			c.errorf(f.offset, "%q looks like a credential; keys never go in a file: set OPENAI_API_KEY, ANTHROPIC_API_KEY or GUILDHALL_API_KEY in the environment, or use /run/secrets", f.key)
			continue
		}
		findSecretsAt(c, f.value, append(path[:len(path):len(path)], f.key))
	}
	for _, it := range n.items {
		findSecretsAt(c, it, append(path[:len(path):len(path)], "[]"))
	}
}

func checkDeploymentValues(c *checker, root *jnode, d *Deployment) {
	at := func(path ...string) int64 {
		n := root
		for _, p := range path {
			if next := n.field(p); next != nil {
				n = next
			} else {
				break
			}
		}
		return n.offset
	}
	checkModelValues(c, at, d)
	switch d.Theme {
	case "", ThemeAuto, ThemeDark, ThemeLight:
	default:
		c.errorf(at("theme"), "theme %q is not one of auto (the default), dark, light", d.Theme)
	}
	switch d.Logging.Level {
	case "", "full", "standard":
	default:
		c.errorf(at("logging", "level"), "logging.level %q is not one of full, standard", d.Logging.Level)
	}
	e := d.Executor
	if e.MaxAgentDepth < 1 {
		c.errorf(at("executor", "maxAgentDepth"), "executor.maxAgentDepth must be at least 1")
	}
	if e.DefaultToolTimeoutSeconds < 1 {
		c.errorf(at("executor", "defaultToolTimeoutSeconds"), "executor.defaultToolTimeoutSeconds must be at least 1")
	}
	if e.ContextPressureThreshold <= 0 || e.ContextPressureThreshold >= 1 {
		c.errorf(at("executor", "contextPressureThreshold"), "executor.contextPressureThreshold must be a fraction between 0 and 1, such as 0.8")
	}
	for i, name := range e.PassEnv {
		pos := at("executor", "passEnv")
		if n := root.field("executor").field("passEnv"); n != nil && i < len(n.items) {
			pos = n.items[i].offset
		}
		switch {
		case !validEnvPattern(name):
			c.errorf(pos, "executor.passEnv[%d] %q is not an environment variable name (letters, digits and '_', optionally ending in '*')", i, name)
		case tools.NeverPassEnv(strings.TrimSuffix(name, "*")) || strings.EqualFold(strings.TrimSuffix(name, "*"), "GUILDHALL_"):
			c.errorf(pos, "executor.passEnv[%d] %q: Guildhall's own variables and the provider keys never reach a tool", i, name)
		}
	}
	checkBudgetValues(c, at, e.Budget)
	if d.ContextPolicy.MaxToolOutputChars < 1 {
		c.errorf(at("contextPolicy", "maxToolOutputChars"), "contextPolicy.maxToolOutputChars must be at least 1")
	}
	checkSandboxValues(c, root, d)
	checkWebSearch(c, root, d)
	checkMCPServers(c, root, d)
	for _, p := range d.Notify.check() {
		c.errorf(at("notify", p.field), "%s", p.msg)
	}
	checkDetach(c, root, d)
}

// validEnvPattern reports whether s is a variable name, or a prefix of one
// followed by '*'.
func validEnvPattern(s string) bool {
	s = strings.TrimSuffix(s, "*")
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

// CheckAgainstGuild verifies that the handler roles the deployment names
// exist in the guild. Each problem names where the setting came from (a
// file, an environment variable).
func (d *Deployment) CheckAgainstGuild(g *Guild) error {
	var errs ConfigErrors
	check := func(field, role string) {
		if role == "" || g.Roles[role] != nil {
			return
		}
		origin := cmp.Or(d.Origin(field), d.Source)
		errs = append(errs, &ConfigError{File: origin, Msg: field + " names role " + strconv.Quote(role) + ", which the guild " + g.Source + " does not have; add the role or remove the setting"})
	}
	for _, h := range d.handlerRoles() {
		check(h.path, *h.role)
	}
	errs = append(errs, d.checkMCPGrants(g)...)
	errs = append(errs, d.checkRoleModels(g)...)
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// FitToGuild clears the built-in default handler roles that a guild does
// not define, so the defaults work with any guild. A handler role a file
// or the environment set is never cleared: CheckAgainstGuild reports it.
func (d *Deployment) FitToGuild(g *Guild) {
	for _, h := range d.handlerRoles() {
		if *h.role != "" && g.Roles[*h.role] == nil && d.Origin(h.path) == "" {
			*h.role = ""
		}
	}
	if t := d.Executor.InterruptTriggers; t != nil && t.HandlerRole == "" {
		d.Executor.InterruptTriggers = nil
	}
}

type handlerRole struct {
	path string
	role *string
}

func (d *Deployment) handlerRoles() []handlerRole {
	out := []handlerRole{
		{"executor.contextHandlerRole", &d.Executor.ContextHandlerRole},
		{"executor.inquiryHandlerRole", &d.Executor.InquiryHandlerRole},
	}
	if t := d.Executor.InterruptTriggers; t != nil {
		out = append(out, handlerRole{"executor.interruptTriggers.handlerRole", &t.HandlerRole},
			handlerRole{"executor.interruptTriggers.planOwnerRole", &t.PlanOwnerRole})
	}
	return out
}

// CheckGenerationFits verifies that the completion budget leaves room in
// the context window, once the window is known: configured, reported by
// the server's model list, or the built-in default. The message says where
// each number came from.
func (d *Deployment) CheckGenerationFits() error {
	max, window := d.Model.Generation.MaxTokens, d.Model.ContextWindow
	// An unset maxTokens is not the operator's choice: OutputReserve fits
	// the built-in default to the window instead.
	if window <= 0 || max < window || d.Origin("model.generation.maxTokens") == "" {
		return nil
	}
	from := func(path, fallback string) string { return cmp.Or(d.Origin(path), fallback) }
	return &ConfigError{File: from("model.generation.maxTokens", d.Source), Msg: fmt.Sprintf(
		"model.generation.maxTokens %d leaves no room for the prompt in a context window of %d tokens (model.contextWindow, from %s); lower maxTokens or set model.contextWindow",
		max, window, from("model.contextWindow", "the built-in default: the server did not report a window"))}
}

// validCurrency accepts an ISO 4217 style code: three ASCII capitals.
func validCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}
