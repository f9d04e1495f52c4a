package runner

// The detach section of deployment.json: how long a console whose
// terminal went away keeps a question waiting before it stops the run at
// that resumable point and exits. Without a limit, a console whose SSH
// session dropped while it asked would hold its workspace for ever.

import (
	"fmt"
	"time"
)

// DetachConfig is deployment.json's detach section.
type DetachConfig struct {
	// IdleTimeout is a duration ("30m", "24h"); "" is the default,
	// DefaultDetachIdle, and "0" waits for ever.
	IdleTimeout string `json:"idleTimeout,omitempty"`
}

// DefaultDetachIdle is how long a detached console waits on a question by
// default.
const DefaultDetachIdle = 24 * time.Hour

// Idle is how long a detached console waits on a question, 0 for ever. A
// value check refused is read as the default.
func (d DetachConfig) Idle() time.Duration {
	if d.IdleTimeout == "" {
		return DefaultDetachIdle
	}
	v, err := parseIdle(d.IdleTimeout)
	if err != nil {
		return DefaultDetachIdle
	}
	return v
}

func parseIdle(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	v, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("detach.idleTimeout %q is not a duration such as \"30m\" or \"24h\" (\"0\" waits for ever)", s)
	case v < 0:
		return 0, fmt.Errorf("detach.idleTimeout %q is negative; give a duration such as \"30m\", or \"0\" to wait for ever", s)
	case v > 0 && v < time.Second:
		return 0, fmt.Errorf("detach.idleTimeout %q is under a second; give at least \"1s\", or \"0\" to wait for ever", s)
	}
	return v, nil
}

// checkDetach reports a bad detach.idleTimeout at its position.
func checkDetach(c *checker, root *jnode, d *Deployment) {
	if d.Detach.IdleTimeout == "" {
		if n := root.field("detach").field("idleTimeout"); n != nil {
			c.errorf(offsetOf(n), "detach.idleTimeout is empty; give a duration such as \"24h\", or \"0\" to wait for ever")
		}
		return
	}
	if _, err := parseIdle(d.Detach.IdleTimeout); err != nil {
		c.errorf(offsetOf(root.field("detach").field("idleTimeout")), "%s", err)
	}
}
