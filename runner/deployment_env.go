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

// envValue is an ORCHESTRATOR_* value parsed as its setting's kind; only
// the field of that kind is meaningful.
type envValue struct {
	s string
	n int
	f float64
}

// originalEnv are the original system's environment overrides, each
// replacing one deployment setting. Guildhall's own GUILDHALL_* names and
// the flags are applied after them, so they win when both are set. Each row
// holds its own setter, so the variable, the setting's path and the field
// it writes are named in one place.
var originalEnv = []struct {
	name, path string
	kind       envKind
	set        func(d *Deployment, v envValue)
}{
	{"ORCHESTRATOR_MODEL", "model.name", envString, func(d *Deployment, v envValue) { d.Model.Name = v.s }},
	{"ORCHESTRATOR_API_BASE", "model.apiBase", envString, func(d *Deployment, v envValue) { d.Model.APIBase = v.s }},
	{"ORCHESTRATOR_MODEL_CONTEXT_WINDOW", "model.contextWindow", envInt, func(d *Deployment, v envValue) { d.Model.ContextWindow = v.n }},
	{"ORCHESTRATOR_TEMPERATURE", "model.generation.temperature", envNumber, func(d *Deployment, v envValue) { d.Model.Generation.Temperature = &v.f }},
	{"ORCHESTRATOR_MAX_TOKENS", "model.generation.maxTokens", envInt, func(d *Deployment, v envValue) { d.Model.Generation.MaxTokens = v.n }},
	{"ORCHESTRATOR_MAX_AGENT_DEPTH", "executor.maxAgentDepth", envInt, func(d *Deployment, v envValue) { d.Executor.MaxAgentDepth = v.n }},
	{"ORCHESTRATOR_TOOL_TIMEOUT_SECONDS", "executor.defaultToolTimeoutSeconds", envInt, func(d *Deployment, v envValue) { d.Executor.DefaultToolTimeoutSeconds = v.n }},
	{"ORCHESTRATOR_MAX_COMPACTION_ATTEMPTS", "executor.maxCompactionAttempts", envInt, func(d *Deployment, v envValue) { d.Executor.MaxCompactionAttempts = v.n }},
	{"ORCHESTRATOR_CONTEXT_PRESSURE_THRESHOLD", "executor.contextPressureThreshold", envFraction, func(d *Deployment, v envValue) { d.Executor.ContextPressureThreshold = v.f }},
	{"ORCHESTRATOR_CONTEXT_HANDLER_ROLE", "executor.contextHandlerRole", envString, func(d *Deployment, v envValue) { d.Executor.ContextHandlerRole = v.s }},
	{"ORCHESTRATOR_INQUIRY_HANDLER_ROLE", "executor.inquiryHandlerRole", envString, func(d *Deployment, v envValue) { d.Executor.InquiryHandlerRole = v.s }},
	{"ORCHESTRATOR_INTERRUPT_HANDLER_ROLE", "executor.interruptTriggers.handlerRole", envString, func(d *Deployment, v envValue) { d.Executor.InterruptTriggers.HandlerRole = v.s }},
	{"ORCHESTRATOR_INTERRUPT_EVERY_TOOL_CALLS", "executor.interruptTriggers.everyToolCalls", envInt, func(d *Deployment, v envValue) { d.Executor.InterruptTriggers.EveryToolCalls = v.n }},
	{"ORCHESTRATOR_INTERRUPT_EVERY_TOKENS", "executor.interruptTriggers.everyTokens", envInt, func(d *Deployment, v envValue) { d.Executor.InterruptTriggers.EveryTokens = v.n }},
	{"ORCHESTRATOR_INTERRUPT_PLAN_OWNER_ROLE", "executor.interruptTriggers.planOwnerRole", envString, func(d *Deployment, v envValue) { d.Executor.InterruptTriggers.PlanOwnerRole = v.s }},
	{"ORCHESTRATOR_MAX_TOOL_OUTPUT_CHARS", "contextPolicy.maxToolOutputChars", envInt, func(d *Deployment, v envValue) { d.ContextPolicy.MaxToolOutputChars = v.n }},
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
		parsed, err := parseEnv(v.kind, val)
		if err != nil {
			return fmt.Errorf("%s=%q: %w", v.name, val, err)
		}
		v.set(d, parsed)
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

// parseEnv reads val as kind.
func parseEnv(kind envKind, val string) (envValue, error) {
	v := envValue{s: val}
	switch kind {
	case envInt:
		n, err := positiveInt(val)
		if err != nil {
			return envValue{}, err
		}
		v.n = n
	case envNumber, envFraction:
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return envValue{}, fmt.Errorf("must be a finite number")
		}
		if kind == envFraction && (f <= 0 || f >= 1) {
			return envValue{}, fmt.Errorf("must be a number between 0 and 1, such as 0.8")
		}
		v.f = f
	}
	return v, nil
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
