package runner

import (
	"fmt"
	"math"
	"strconv"
)

// envKind is how an ORCHESTRATOR_* variable's value is read.
type envKind int

const (
	envString   envKind = iota // a non-empty string
	envInt                     // a positive integer, plain digits
	envNumber                  // a finite number
	envFraction                // a number in (0, 1)
)

// originalEnv are the original system's environment overrides, each
// replacing one deployment setting. Guildhall's own GUILDHALL_* names and
// the flags are applied after them, so they win when both are set.
var originalEnv = []struct {
	name, path string
	kind       envKind
}{
	{"ORCHESTRATOR_MODEL", "model.name", envString},
	{"ORCHESTRATOR_API_BASE", "model.apiBase", envString},
	{"ORCHESTRATOR_MODEL_CONTEXT_WINDOW", "model.contextWindow", envInt},
	{"ORCHESTRATOR_TEMPERATURE", "model.generation.temperature", envNumber},
	{"ORCHESTRATOR_MAX_TOKENS", "model.generation.maxTokens", envInt},
	{"ORCHESTRATOR_MAX_AGENT_DEPTH", "executor.maxAgentDepth", envInt},
	{"ORCHESTRATOR_TOOL_TIMEOUT_SECONDS", "executor.defaultToolTimeoutSeconds", envInt},
	{"ORCHESTRATOR_MAX_COMPACTION_ATTEMPTS", "executor.maxCompactionAttempts", envInt},
	{"ORCHESTRATOR_CONTEXT_PRESSURE_THRESHOLD", "executor.contextPressureThreshold", envFraction},
	{"ORCHESTRATOR_CONTEXT_HANDLER_ROLE", "executor.contextHandlerRole", envString},
	{"ORCHESTRATOR_INQUIRY_HANDLER_ROLE", "executor.inquiryHandlerRole", envString},
	{"ORCHESTRATOR_INTERRUPT_HANDLER_ROLE", "executor.interruptTriggers.handlerRole", envString},
	{"ORCHESTRATOR_INTERRUPT_EVERY_TOOL_CALLS", "executor.interruptTriggers.everyToolCalls", envInt},
	{"ORCHESTRATOR_INTERRUPT_EVERY_TOKENS", "executor.interruptTriggers.everyTokens", envInt},
	{"ORCHESTRATOR_INTERRUPT_PLAN_OWNER_ROLE", "executor.interruptTriggers.planOwnerRole", envString},
	{"ORCHESTRATOR_MAX_TOOL_OUTPUT_CHARS", "contextPolicy.maxToolOutputChars", envInt},
}

// OriginalEnvNames lists the ORCHESTRATOR_* variables ApplyOriginalEnv
// reads, with the setting each replaces, in the original's order.
func OriginalEnvNames() [][2]string {
	out := make([][2]string, len(originalEnv))
	for i, v := range originalEnv {
		out[i] = [2]string{v.name, v.path}
	}
	return out
}

// ApplyOriginalEnv applies the original system's ORCHESTRATOR_* overrides
// read through getenv, each over exactly one setting, and records the
// variable as the setting's origin. An unset or empty variable is not set:
// it never clears a value. A value that does not parse is an error naming
// the variable. As in the original, a loop-check cadence the deployment
// does not have needs its handler role and both thresholds together.
func (d *Deployment) ApplyOriginalEnv(getenv func(string) string) error {
	set := map[string]string{}
	for _, v := range originalEnv {
		if val := getenv(v.name); val != "" {
			set[v.name] = val
		}
	}
	if d.Executor.InterruptTriggers == nil && anyInterruptVar(set) {
		for _, need := range []string{"ORCHESTRATOR_INTERRUPT_HANDLER_ROLE", "ORCHESTRATOR_INTERRUPT_EVERY_TOOL_CALLS", "ORCHESTRATOR_INTERRUPT_EVERY_TOKENS"} {
			if set[need] == "" {
				return fmt.Errorf("%s is not set: the deployment has no executor.interruptTriggers, so introducing the loop-check cadence from the environment needs ORCHESTRATOR_INTERRUPT_HANDLER_ROLE, ORCHESTRATOR_INTERRUPT_EVERY_TOOL_CALLS and ORCHESTRATOR_INTERRUPT_EVERY_TOKENS together", need)
			}
		}
		d.Executor.InterruptTriggers = &InterruptTriggers{}
	}
	for _, v := range originalEnv {
		val, ok := set[v.name]
		if !ok {
			continue
		}
		if err := d.applyEnv(v.path, v.kind, val); err != nil {
			return fmt.Errorf("%s=%q: %w", v.name, val, err)
		}
		d.SetOrigin(v.path, v.name)
	}
	return nil
}

func anyInterruptVar(set map[string]string) bool {
	for _, n := range []string{"ORCHESTRATOR_INTERRUPT_HANDLER_ROLE", "ORCHESTRATOR_INTERRUPT_EVERY_TOOL_CALLS", "ORCHESTRATOR_INTERRUPT_EVERY_TOKENS", "ORCHESTRATOR_INTERRUPT_PLAN_OWNER_ROLE"} {
		if set[n] != "" {
			return true
		}
	}
	return false
}

// applyEnv parses val as kind and stores it at path.
func (d *Deployment) applyEnv(path string, kind envKind, val string) error {
	var n int
	var f float64
	switch kind {
	case envInt:
		var err error
		if n, err = positiveInt(val); err != nil {
			return err
		}
	case envNumber, envFraction:
		var err error
		f, err = strconv.ParseFloat(val, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("must be a finite number")
		}
		if kind == envFraction && (f <= 0 || f >= 1) {
			return fmt.Errorf("must be a number between 0 and 1, such as 0.8")
		}
	}
	e, t := &d.Executor, d.Executor.InterruptTriggers
	switch path {
	case "model.name":
		d.Model.Name = val
	case "model.apiBase":
		d.Model.APIBase = val
	case "model.contextWindow":
		d.Model.ContextWindow = n
	case "model.generation.temperature":
		d.Model.Generation.Temperature = &f
	case "model.generation.maxTokens":
		d.Model.Generation.MaxTokens = n
	case "executor.maxAgentDepth":
		e.MaxAgentDepth = n
	case "executor.defaultToolTimeoutSeconds":
		e.DefaultToolTimeoutSeconds = n
	case "executor.maxCompactionAttempts":
		e.MaxCompactionAttempts = n
	case "executor.contextPressureThreshold":
		e.ContextPressureThreshold = f
	case "executor.contextHandlerRole":
		e.ContextHandlerRole = val
	case "executor.inquiryHandlerRole":
		e.InquiryHandlerRole = val
	case "executor.interruptTriggers.handlerRole":
		t.HandlerRole = val
	case "executor.interruptTriggers.everyToolCalls":
		t.EveryToolCalls = n
	case "executor.interruptTriggers.everyTokens":
		t.EveryTokens = n
	case "executor.interruptTriggers.planOwnerRole":
		t.PlanOwnerRole = val
	case "contextPolicy.maxToolOutputChars":
		d.ContextPolicy.MaxToolOutputChars = n
	default:
		return fmt.Errorf("no setting %s", path)
	}
	return nil
}

// positiveInt parses plain digits (no sign, no spaces, no 0x, no
// exponent) as a positive integer, as the original does.
func positiveInt(s string) (int, error) {
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("must be a positive integer written as plain digits")
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("must be a positive integer written as plain digits")
	}
	return n, nil
}
