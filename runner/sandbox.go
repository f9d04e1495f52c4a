package runner

import (
	"fmt"
	"strings"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/tools/egress"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// checkSandboxValues validates deployment.json's sandbox section, each
// problem at its own position.
func checkSandboxValues(c *checker, root *jnode, d *Deployment) {
	sec := root.field("sandbox")
	if sec == nil {
		return
	}
	at := func(key string) int64 {
		if n := sec.field(key); n != nil {
			return n.offset
		}
		return sec.offset
	}
	item := func(key string, i int) int64 {
		if n := sec.field(key); n != nil && i < len(n.items) {
			return n.items[i].offset
		}
		return at(key)
	}
	s := d.Sandbox
	if _, err := sandbox.ParseMode(s.Mode); err != nil {
		c.errorf(at("mode"), "sandbox.mode %q is not one of workspace-write (the default), read-only, none", s.Mode)
	}
	if _, err := sandbox.ParseNetwork(s.Network); err != nil {
		c.errorf(at("network"), "sandbox.network %q is not one of off (the default), allowlist", s.Network)
	}
	if len(s.Allow) > 0 && s.Network != string(sandbox.NetworkAllowlist) {
		network := s.Network
		if network == "" {
			network = "off"
		}
		c.errorf(at("allow"), "sandbox.allow lists hosts, but sandbox.network is %q; set \"network\": \"allowlist\" to use them", network)
	}
	for i, pat := range s.Allow {
		if _, err := egress.ParsePolicy([]string{pat}); err != nil {
			c.errorf(item("allow", i), "sandbox.allow[%d] %q: %s", i, pat, strings.TrimPrefix(err.Error(), fmt.Sprintf("allow[0] %q: ", pat)))
		}
	}
	for i, w := range s.Writable {
		if _, err := sandbox.CheckWritable(w); err != nil {
			c.errorf(item("writable", i), "sandbox.writable[%d] %q: %v", i, w, err)
		}
	}
	for i, r := range s.ReadOnly {
		if _, err := sandbox.CheckReadOnly(r); err != nil {
			c.errorf(item("readOnly", i), "sandbox.readOnly[%d] %q: %v", i, r, err)
		}
	}
	if err := s.Limits.Check(); err != nil {
		c.errorf(at("limits"), "%v", err)
	}
}

// openSandbox prepares the run's sandbox from the deployment's policy. It
// starts nothing: the helper starts at the first command.
func (r *Run) openSandbox() error {
	p, err := sandbox.NewPolicy(r.opts.Deployment.Sandbox)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	host := r.opts.Sandbox
	if host == nil {
		host = sandbox.NewHost()
	}
	r.sb, err = host.Open(sandbox.Options{Policy: p, Workspace: r.wsTool.Canonical(), OnEgress: r.egressEvent})
	return err
}

// egressEvent logs one decision of the sandbox's proxy for the role whose
// call made it.
func (r *Run) egressEvent(d egress.Decision, c sandbox.Caller) {
	r.emitEgress(d, c.Role, c.RoleID)
}

// warmSandbox starts the sandbox's helper in the background when a role
// of the guild may run commands, so that its start overlaps the first
// model call.
func (r *Run) warmSandbox() {
	if r.sb == nil {
		return
	}
	for _, role := range r.opts.Guild.Roles {
		for _, t := range []string{"run_shell", "typecheck", "test"} {
			if role.Grants(t) {
				go r.sb.Warm()
				return
			}
		}
	}
}

// closeSandbox stops the run's helper and proxy; no egress event comes
// after it.
func (r *Run) closeSandbox() {
	if r.sb != nil {
		_ = r.sb.Close()
	}
}

// SandboxTamperedKind is the error kind of a run stopped because a
// command broke into its sandbox: a frame on the sandbox helper's channel
// was not the helper's, so no command result of the run can be trusted.
const SandboxTamperedKind = "sandbox_tampered"

// sandboxTampered is the sandbox's TamperedError once a command broke in,
// else nil. It is checked after every tool call: the run stops there.
func (r *Run) sandboxTampered() error {
	if r.sb == nil {
		return nil
	}
	return r.sb.Tampered()
}

// tamperedCard is the card of a run its sandbox's break-in stopped.
func tamperedCard(err error) event.Card {
	return errorCard(SandboxTamperedKind, "The run stopped: "+err.Error()+
		". A process in the sandbox wrote on the channel that carries command results; treat the workspace as hostile and look at the run's last commands (`guildhall show`) before running anything from it.")
}
