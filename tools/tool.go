// Package tools is the tool guild: the built-in tools roles call, each with
// its embedded default manifest, and the workspace containment they share.
//
// The workspace is untrusted input. Every file tool resolves paths through an
// os.Root opened on the workspace, so no path, symlink or race can reach
// outside it, and the top-level .orchestration bookkeeping directory is
// refused with permission_denied.
//
// Tools that need the runner's state (agent, finish, context_info,
// edit_context, trigger_interrupt and the inspection tools) are implemented
// by the runner; their default manifests live here with the rest.
package tools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/guildhall/guildhall/tools/egress"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// Tool is one callable tool.
type Tool interface {
	// Manifest is the tool's embedded default manifest.
	Manifest() Manifest
	// Call runs the tool. args has already been validated against the
	// manifest's parameter schema. Failures are returned as a Result with an
	// error kind, never as a Go error: they are data the model acts on.
	Call(ctx context.Context, env *Env, args json.RawMessage) Result
}

// Error kinds a tool result may carry.
const (
	KindSuccess          = "success"
	KindInvalidArguments = "invalid_arguments"
	KindPermissionDenied = "permission_denied"
	KindNotFound         = "not_found"
	KindTimeout          = "timeout"
	KindUnavailable      = "unavailable"
	KindError            = "error"
	// KindSandboxTampered is a command whose sandbox was broken into: a
	// frame on the helper's channel was not the helper's. The run stops.
	KindSandboxTampered = "sandbox_tampered"
)

// Result is a tool's outcome: {kind: "success", data} or {kind, message, details}.
type Result struct {
	Kind    string
	Data    any
	Message string
	Details any
}

// OK is a successful result.
func OK(data any) Result { return Result{Kind: KindSuccess, Data: data} }

// Fail is a failed result of the given kind.
func Fail(kind, message string) Result { return Result{Kind: kind, Message: message} }

// Failed reports whether the result is an error.
func (r Result) Failed() bool { return r.Kind != KindSuccess }

// MarshalJSON renders the original's ToolResult shape.
func (r Result) MarshalJSON() ([]byte, error) {
	if r.Kind == KindSuccess {
		return json.Marshal(struct {
			Kind string `json:"kind"`
			Data any    `json:"data"`
		}{r.Kind, r.Data})
	}
	return json.Marshal(struct {
		Kind    string `json:"kind"`
		Message string `json:"message,omitempty"`
		Details any    `json:"details,omitempty"`
	}{r.Kind, r.Message, r.Details})
}

// Option is a suggested answer to an ask_human question.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Question is an ask_human question on its way to the operator.
type Question struct {
	Question string
	Context  string
	Options  []Option
}

// Asker delivers questions to an operator and waits for the first answer.
type Asker interface {
	Ask(ctx context.Context, q Question) (answer string, err error)
}

// RunMeta is the part of the run's meta.json the git tools read and write.
type RunMeta interface {
	GitBase() string
	SetGitBase(commit string) error
}

// Env is what a tool call may use besides its arguments.
type Env struct {
	Workspace *Workspace
	// RunID is the current run; RunsDir is <workspace>/.orchestration/runs.
	RunID   string
	RunsDir string
	// Role and RoleID name the calling role instance.
	Role   string
	RoleID string
	// TimeoutCeiling is the deployment's defaultToolTimeoutSeconds: a call
	// may lower its timeout but never raise it above this.
	TimeoutCeiling time.Duration
	// PassEnv names the operator's variables that tool subprocesses get
	// beyond EnvAllowlist (executor.passEnv).
	PassEnv []string
	// Environ is the environment the allowlist is applied to for tool
	// subprocesses; nil means this process's own (os.Environ). A harness
	// running many workspaces in one process (bench) gives each its own
	// PATH, HOME and TMPDIR this way.
	Environ []string
	Asker   Asker
	Meta    RunMeta

	// Egress is the hosts the web tools may reach (the deployment's
	// sandbox.allow); the zero Policy allows nothing.
	Egress egress.Policy
	// OnEgress is told of every egress attempt and its decision; nil is
	// allowed.
	OnEgress func(egress.Decision)
	// WebSearch is web_search's endpoint; the zero value leaves it
	// unavailable.
	WebSearch WebSearchConfig
	// Sandbox confines the subprocess tools (tools/sandbox); without one
	// they refuse to run.
	Sandbox *sandbox.Sandbox
	// Undo keeps what the file tools change, for a revert (undo.go); nil
	// keeps nothing.
	Undo Undo
}
