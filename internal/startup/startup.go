// Package startup keeps the garbage collector off while the binary's
// packages initialise, and turns it back on when main begins.
//
// Go runs every linked package's initialisation before main. The one
// binary links the terminal, web and provider stacks, whose initialisation
// allocates about 4 MB: one collection at the 4 MB minimum heap goal, with
// nothing to free but the garbage of maps and tables being built. Skipping
// it saves 1–2 ms of the 15 ms every command pays before doing anything
// (BenchmarkProcessStartup; docs/operations.md "Performance").
//
// To be initialised before the packages whose allocations it is meant to
// cover, this package imports nothing: the linker runs initialisation in
// import-path order among packages whose imports are done, so a package
// with no imports comes within the first few, while one that imported
// runtime/debug would wait for fmt, os and everything before them. It
// reaches the collector's setting through the runtime's own push of
// runtime/debug.setGCPercent, which is what runtime/debug.SetGCPercent
// calls.
package startup

import _ "unsafe" // for go:linkname

//go:linkname setGCPercent runtime/debug.setGCPercent
func setGCPercent(percent int32) int32

// gcPercent is the setting the process started with (GOGC, or 100), which
// Done restores; a GOMEMLIMIT still applies while the collector is off.
var gcPercent = setGCPercent(-1)

// Done turns the collector back on with the setting the process started
// with. The main package calls it from its own init, which runs after
// every other package's (and in its test binaries too).
func Done() { setGCPercent(gcPercent) }
