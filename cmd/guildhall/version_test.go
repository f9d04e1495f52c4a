package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		ok      bool
		want    string
	}{
		{"stamped at release", "v1.4.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, true, "v1.4.0"},
		{"go install of a tag", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, true, "v1.3.0"},
		{"go install of a commit", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261129120000-abcdef123456"}}, true, "v0.0.0-20261129120000-abcdef123456"},
		{"build in a checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "3eb651f0c9a1b2c3d4e5f60718293a4b5c6d7e8f", "vcs.time", "2026-11-29T12:00:00Z", "vcs.modified", "false")}, true,
			"dev (3eb651f0c9a1, 2026-11-29T12:00:00Z)"},
		{"build with local changes", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "3eb651f", "vcs.modified", "true")}, true, "dev (3eb651f, modified)"},
		{"no vcs information", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
		{"no build information", "", nil, false, "dev"},
	} {
		if got := versionFrom(tc.stamped, tc.bi, tc.ok); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// --version prints what the build information gives (this test binary's
// own module is "(devel)" without vcs data unless built in a checkout).
func TestVersionFlagUsesTheBuildInfo(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	res := runCLI(t, "", "--version")
	if want := "guildhall version " + versionFrom(version, bi, ok) + "\n"; res.code != 0 || res.stdout != want {
		t.Fatalf("--version: exit %d, %q, want %q", res.code, res.stdout, want)
	}
}
