package main

import (
	"runtime/debug"
	"strings"
)

// versionString is the stamped version, or else what the Go toolchain
// recorded: the module version for `go install …@v1.2.3`, or the commit
// for a build in a checkout. "dev" only when neither is known.
func versionString(stamped string) string {
	bi, ok := debug.ReadBuildInfo()
	return versionFrom(stamped, bi, ok)
}

func versionFrom(stamped string, bi *debug.BuildInfo, ok bool) string {
	if stamped != "" && stamped != "dev" {
		return stamped
	}
	if !ok || bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	parts := []string{rev}
	if at != "" {
		parts = append(parts, at)
	}
	if modified {
		parts = append(parts, "modified")
	}
	return "dev (" + strings.Join(parts, ", ") + ")"
}
