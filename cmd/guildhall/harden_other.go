//go:build !linux

package main

// hardenProcess does nothing where /proc and prctl do not exist; the keys
// are still out of the environment children inherit.
func hardenProcess([]string) {}
