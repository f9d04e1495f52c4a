package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// execMain is the exec helper (ExecCommand): started by bwrap as the
// sandbox's first process, with the server's argv after "--" and,
// optionally, "--proxy SOCKET" before it. It bridges the proxy onto the
// sandbox's own loopback and points the proxy variables at it (only
// inside is the port known), starts the server on its own stdin, stdout
// and stderr, and, when the server exits, kills every other process of
// the sandbox and exits with the server's status. A program that cannot
// be started is status 127 with the reason on stderr, as in sh.
func execMain(args []string, diag io.Writer) int {
	if !inSandboxNamespace() {
		fmt.Fprintln(diag, "guildhall: the sandbox exec helper only runs inside the sandbox Guildhall starts")
		return 2
	}
	if err := undumpable(); err != nil {
		fmt.Fprintln(diag, "guildhall sandbox exec helper:", err)
		return 2
	}
	sock, argv, err := parseExecArgs(args)
	if err != nil {
		fmt.Fprintln(diag, "guildhall sandbox exec helper:", err)
		return 2
	}
	env := os.Environ()
	if sock != "" {
		port, err := bridgeProxy(sock)
		if err != nil {
			fmt.Fprintln(diag, "guildhall sandbox exec helper: proxy bridge:", err)
			return 2
		}
		env = withProxyEnv(env, port)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(diag, "guildhall: cannot start %s: %v\n", argv[0], cleanErr(err))
		return 127
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(diag, "guildhall: cannot start %s: %v\n", argv[0], cleanErr(err))
		return 127
	}
	err = cmd.Wait()
	killAllButMe()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	return 128 + 9 // killed by a signal
}

// parseExecArgs reads "[--proxy SOCKET] -- ARGV...".
func parseExecArgs(args []string) (sock string, argv []string, err error) {
	if len(args) >= 2 && args[0] == "--proxy" {
		sock, args = args[1], args[2:]
	}
	if len(args) < 2 || args[0] != "--" {
		return "", nil, errors.New("usage: [--proxy SOCKET] -- PROGRAM [ARGS...]")
	}
	return sock, args[1:], nil
}

// withProxyEnv replaces the proxy variables of env with the bridge's.
func withProxyEnv(env []string, port int) []string {
	names := map[string]bool{}
	for _, n := range proxyVarNames {
		names[n] = true
	}
	for _, n := range []string{"NO_PROXY", "no_proxy"} {
		names[n] = true
	}
	out := make([]string, 0, len(env)+len(proxyVarNames))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !names[name] {
			out = append(out, kv)
		}
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for _, n := range proxyVarNames {
		out = append(out, n+"="+url)
	}
	return out
}

// proxyVarNames are the variables every common client reads its proxy
// from.
var proxyVarNames = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

// cleanErr drops exec's "exec: " prefix.
func cleanErr(err error) string {
	return strings.TrimPrefix(err.Error(), "exec: ")
}
