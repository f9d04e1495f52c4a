//go:build !linux

package shell

// ReapExited reaps exited orphans; only Linux has subreapers.
func (r *Reaper) ReapExited() int { return 0 }
