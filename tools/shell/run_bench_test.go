package shell

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkRunEcho is one unconfined shell call that runs only a builtin:
// what run_shell "echo hi" costs without the sandbox.
func BenchmarkRunEcho(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		res, err := Run(context.Background(), Spec{Dir: dir, Command: "echo hi", Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second, MaxChars: 1000})
		if err != nil || res.Stdout != "hi\n" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

// BenchmarkRunExternal is one shell call that runs a program.
func BenchmarkRunExternal(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		res, err := Run(context.Background(), Spec{Dir: dir, Command: "/bin/true", Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second, MaxChars: 1000})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

// BenchmarkForkExecFloor is the floor of any real `sh -c`: fork and exec
// /bin/sh running `true`, wait for it, nothing else.
func BenchmarkForkExecFloor(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
