// Package initpages gives back the executable's pages that package
// initialisation mapped, once it is over, as a kernel frees its __init
// sections after boot.
//
// Go runs every linked package's initialisation before main. In the one
// binary that touches init code all over the text, the runtime's itab
// table (the type descriptors of nearly every type), and the strings and
// tables the packages build from: about 27 MiB of the executable's pages
// are mapped by then, most of which the command never uses again, and the
// kernel maps 64 KiB around every page that a fault touches. Those pages
// stay mapped, and counted in the process's resident set, for its whole
// life; a run then maps the pages it does use on top of them.
//
// Release unmaps the executable's read-only mappings. They are clean
// pages of the page cache, so nothing is lost: what the command needs next
// comes back through a minor fault from the same cache. Measured on the
// 100-turn benchmark, the peak resident set falls from 42 to 32 MiB (the
// peak of initialisation itself) at no measurable CPU cost; see
// docs/operations.md "Performance".
package initpages
