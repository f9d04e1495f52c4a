package sandbox

import (
	"fmt"

	"github.com/guildhall/guildhall/tools/shell"
)

// This file holds sandbox.limits: the resources one shell command may use
// in the sandbox, their defaults, and the line a tool result gets when a
// command runs into one.

// LimitsConfig is sandbox.limits as written. A field left out (or 0)
// takes its default; a workspace's file may lower a limit, never raise it
// (runner/trust).
type LimitsConfig struct {
	// CPUSeconds is the CPU time of each process of a command.
	CPUSeconds int64 `json:"cpuSeconds,omitempty"`
	// AddressSpaceMiB is the virtual memory of each process; no limit by
	// default (see DefaultLimits).
	AddressSpaceMiB int64 `json:"addressSpaceMiB,omitempty"`
	// FileSizeMiB is the largest file a command may write.
	FileSizeMiB int64 `json:"fileSizeMiB,omitempty"`
	// Processes is how many processes a command may have at once.
	Processes int `json:"processes,omitempty"`
}

// The defaults: a real build fits in them, a runaway command does not.
//   - CPU: ten minutes of one core per process, far past the default
//     30-second tool timeout, so it only matters to a longer one.
//   - Address space: none. Address space is not memory: Node reserves
//     about 10 GiB of it for each WebAssembly memory (measured: one fits
//     in 16 GiB, six need more than 32 GiB), and Go and the JVM reserve
//     large arenas too, so any limit low enough to protect the machine
//     breaks ordinary toolchains. An operator may still set one.
//   - File size: 1 GiB, above any build artefact a workspace should hold.
//   - Processes: 1024 at once, several times what `make -j` or
//     `go test ./...` start, few enough that a fork bomb is harmless.
const (
	DefaultCPUSeconds      = 600
	DefaultAddressSpaceMiB = 0
	DefaultFileSizeMiB     = 1024
	DefaultProcesses       = 1024
)

// maxLimit bounds each field, so that an overflow cannot wrap to a tiny
// limit (MiB fields are multiplied by 2^20).
const maxLimit = 1 << 40

// Effective is c with the defaults filled in.
func (c LimitsConfig) Effective() LimitsConfig {
	if c.CPUSeconds == 0 {
		c.CPUSeconds = DefaultCPUSeconds
	}
	if c.AddressSpaceMiB == 0 {
		c.AddressSpaceMiB = DefaultAddressSpaceMiB
	}
	if c.FileSizeMiB == 0 {
		c.FileSizeMiB = DefaultFileSizeMiB
	}
	if c.Processes == 0 {
		c.Processes = DefaultProcesses
	}
	return c
}

// Check reports the first field out of range, naming it.
func (c LimitsConfig) Check() error {
	for _, f := range c.fields() {
		if f.value < 0 || f.value > maxLimit {
			return fmt.Errorf("sandbox.limits.%s %d must be a positive number (0 or absent for the default, %s)", f.key, f.value, f.def)
		}
	}
	return nil
}

// Looser lists the fields of c (a workspace's) that raise a limit above
// base's (the operator's), or lift one base sets: the keys a workspace may
// not set.
func (c LimitsConfig) Looser(base LimitsConfig) []string {
	var out []string
	own, theirs := c.Effective().fields(), base.Effective().fields()
	for i, f := range c.fields() {
		if f.value == 0 {
			continue // not set: the base's limit stands
		}
		lim, baseLim := own[i].value, theirs[i].value
		if baseLim != 0 && (lim == 0 || lim > baseLim) {
			out = append(out, f.key)
		}
	}
	return out
}

type limitField struct {
	key   string
	value int64
	def   string
}

func (c LimitsConfig) fields() []limitField {
	return []limitField{
		{"cpuSeconds", c.CPUSeconds, fmt.Sprint(DefaultCPUSeconds)},
		{"addressSpaceMiB", c.AddressSpaceMiB, "no limit"},
		{"fileSizeMiB", c.FileSizeMiB, fmt.Sprint(DefaultFileSizeMiB)},
		{"processes", int64(c.Processes), fmt.Sprint(DefaultProcesses)},
	}
}

// shellLimits is c, defaults filled in, in the shell's units.
func (c LimitsConfig) shellLimits() shell.Limits {
	e := c.Effective()
	return shell.Limits{CPUSeconds: e.CPUSeconds, AddressSpace: e.AddressSpaceMiB << 20, FileSize: e.FileSizeMiB << 20, Processes: e.Processes}
}

// limitNote is the line a tool result gets when its command ran into a
// limit: which one, its value, and the setting that raises it.
func limitNote(res shell.Result, l shell.Limits) string {
	var what, key string
	switch res.Exceeded {
	case shell.LimitCPU:
		what, key = fmt.Sprintf("CPU time limit (%d s per process)", l.CPUSeconds), "cpuSeconds"
	case shell.LimitAddressSpace:
		what, key = fmt.Sprintf("address-space limit (%d MiB per process)", l.AddressSpace>>20), "addressSpaceMiB"
	case shell.LimitFileSize:
		what, key = fmt.Sprintf("file-size limit (%d MiB)", l.FileSize>>20), "fileSizeMiB"
	case shell.LimitProcesses:
		what, key = fmt.Sprintf("process limit (%d)", l.Processes), "processes"
	default:
		return ""
	}
	verb := "stopped: the command exceeded"
	if res.Likely {
		verb = "the command probably ran into"
	}
	return fmt.Sprintf("%s the sandbox's %s; raise sandbox.limits.%s in your deployment.json if it needs more", verb, what, key)
}
