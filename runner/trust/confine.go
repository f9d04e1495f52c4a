package trust

// A workspace's deployment file may tighten the operator's sandbox, never
// loosen it: it cannot turn the sandbox off, make host paths writable or
// show more of them (sandbox.readOnly), for the run or for an MCP server
// it declares. Those settings are the
// operator's alone (their deployment.json, --sandbox), and so is
// notify.command, a program run on the host at every alert, and a longer
// detach.idleTimeout, which keeps a detached console waiting. What a workspace
// asks for beyond that is refused here, before anything applies, and the
// trust prompt says so with a "!" line; the rest of its configuration
// still applies once trusted. Refusing the one setting rather than the
// whole file keeps the prompt an honest list of what will run: what it
// shows is the confinement the run gets.

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/mcp"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// ownConfig names where a sandbox may be loosened, for the refusals.
const ownConfig = "only your own deployment.json (in $XDG_CONFIG_HOME/guildhall) or --sandbox loosens the sandbox"

// confine undoes, in d, every loosening of base's sandbox that file asked
// for, and describes each refusal. base nil is the built-in defaults.
func confine(base, d *runner.Deployment, file string) []Change {
	if base == nil {
		base = runner.DefaultDeployment()
	}
	var out []Change
	refuse := func(format string, a ...any) {
		out = append(out, Change{Text: fmt.Sprintf(format, a...) + "; " + ownConfig, Warn: true})
	}
	baseMode := runMode(base)
	if d.Origin("sandbox.mode") == file && mcp.LooserMode(runMode(d), baseMode) {
		refuse("%s asks for sandbox.mode %q: refused, commands stay in the sandbox (%s)", file, d.Sandbox.Mode, baseMode)
		d.Sandbox.Mode = base.Sandbox.Mode
		d.SetOrigin("sandbox.mode", base.Origin("sandbox.mode"))
	}
	if d.Origin("sandbox.writable") == file {
		kept, refused := operatorsOnly(d.Sandbox.Writable, base.Sandbox.Writable)
		if len(refused) > 0 {
			refuse("%s asks to make %s writable in the sandbox: refused", file, strings.Join(refused, ", "))
			d.Sandbox.Writable = kept
		}
	}
	if d.Origin("sandbox.readOnly") == file {
		// A host path of the workspace's choosing shown to its commands:
		// the toolchains are found from the operator's environment, and
		// only the operator adds to them.
		kept, refused := operatorsOnly(d.Sandbox.ReadOnly, base.Sandbox.ReadOnly)
		if len(refused) > 0 {
			refuse("%s asks to show %s read-only in the sandbox: refused, a workspace may not add mounts", file, strings.Join(refused, ", "))
			d.Sandbox.ReadOnly = kept
		}
	}
	var raised []string
	for _, key := range d.Sandbox.Limits.Looser(base.Sandbox.Limits) {
		if d.Origin("sandbox.limits."+key) == file {
			raised = append(raised, "sandbox.limits."+key)
		}
	}
	if len(raised) > 0 {
		refuse("%s asks to raise %s: refused, the limits stay at %s", file, strings.Join(raised, ", "), limitsText(base.Sandbox.Limits.Effective()))
		d.Sandbox.Limits = tighterOnly(d.Sandbox.Limits, base.Sandbox.Limits)
	}
	if d.Origin("notify.command") == file {
		// A program of the workspace's choosing, run on the host at every
		// alert: not even a trusted workspace sets that.
		out = append(out, Change{Text: file + " asks to set notify.command: refused; only your own deployment.json (in $XDG_CONFIG_HOME/guildhall) names the command alerts run", Warn: true})
		d.Notify.Command = append([]string(nil), base.Notify.Command...)
		d.SetOrigin("notify.command", base.Origin("notify.command"))
	}
	if d.Origin("detach.idleTimeout") == file && longerIdle(d.Detach.Idle(), base.Detach.Idle()) {
		// A console that waits for ever holds the workspace and a process
		// of the operator's: a workspace may only shorten the wait.
		out = append(out, Change{Text: fmt.Sprintf("%s asks for detach.idleTimeout %q: refused, a detached console waits at most %s; only your own deployment.json (in $XDG_CONFIG_HOME/guildhall) lengthens it", file, d.Detach.IdleTimeout, idleText(base.Detach.Idle())), Warn: true})
		d.Detach = base.Detach
		d.SetOrigin("detach.idleTimeout", base.Origin("detach.idleTimeout"))
	}
	mode := runMode(d)
	for _, name := range d.MCPServerNames() {
		c := d.MCPServers[name]
		if c.Origin != file || c.Transport() != mcp.Stdio {
			continue
		}
		if own := sandbox.Mode(c.Sandbox.Mode); own != "" && mcp.LooserMode(own, mode) {
			refuse("%s asks for MCP server %s to run with sandbox mode %q: refused, it runs in the run's sandbox (%s)", file, name, own, mode)
			c.Sandbox.Mode = ""
		}
		kept, refused := operatorsOnly(c.Sandbox.Writable, base.Sandbox.Writable)
		if len(refused) > 0 {
			refuse("%s asks to make %s writable for MCP server %s: refused", file, strings.Join(refused, ", "), name)
			c.Sandbox.Writable = kept
		}
		d.MCPServers[name] = c
	}
	return out
}

// longerIdle reports whether idle waits longer than base (0 is for ever).
func longerIdle(idle, base time.Duration) bool {
	if base == 0 {
		return false
	}
	return idle == 0 || idle > base
}

func idleText(d time.Duration) string {
	if d == 0 {
		return "for ever"
	}
	return d.String()
}

// tighterOnly keeps, of asked, the limits that do not loosen base's; the
// others go back to base's.
func tighterOnly(asked, base sandbox.LimitsConfig) sandbox.LimitsConfig {
	out := asked
	for _, key := range asked.Looser(base) {
		switch key {
		case "cpuSeconds":
			out.CPUSeconds = base.CPUSeconds
		case "addressSpaceMiB":
			out.AddressSpaceMiB = base.AddressSpaceMiB
		case "fileSizeMiB":
			out.FileSizeMiB = base.FileSizeMiB
		case "processes":
			out.Processes = base.Processes
		}
	}
	return out
}

// limitsText is the operator's limits in a few words.
func limitsText(l sandbox.LimitsConfig) string {
	as := "no address-space limit"
	if l.AddressSpaceMiB > 0 {
		as = fmt.Sprintf("%d MiB of address space", l.AddressSpaceMiB)
	}
	return fmt.Sprintf("%d CPU seconds, %s, %d MiB files and %d processes", l.CPUSeconds, as, l.FileSizeMiB, l.Processes)
}

// runMode is a deployment's sandbox mode, "" read as the default.
func runMode(d *runner.Deployment) sandbox.Mode {
	if d.Sandbox.Mode == "" {
		return sandbox.WorkspaceWrite
	}
	return sandbox.Mode(d.Sandbox.Mode)
}

// operatorsOnly splits asked into the paths the operator's own list makes
// writable already and the others.
func operatorsOnly(asked, operators []string) (kept, refused []string) {
	own := map[string]bool{}
	for _, p := range operators {
		own[filepath.Clean(p)] = true
	}
	for _, p := range asked {
		if own[filepath.Clean(p)] {
			kept = append(kept, p)
		} else {
			refused = append(refused, p)
		}
	}
	return kept, refused
}
