//go:build !linux

package shell

import "errors"

// EnableSubreaper is Linux-only; elsewhere an escaped process is left to
// init.
func EnableSubreaper() error { return errors.New("child subreapers need Linux") }

func isSubreaper() bool { return false }

func (r *Reaper) sweep() int { return 0 }

func (r *Reaper) marked(int) bool { return false }
