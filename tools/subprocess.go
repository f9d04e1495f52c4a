package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// Subprocess limits.
const (
	// streamMaxChars caps each of stdout and stderr in a tool result.
	streamMaxChars = 8192
	// defaultTimeoutCeiling applies when the deployment sets none.
	defaultTimeoutCeiling = 30 * time.Second
	// pipeGrace bounds how long output is drained after the process group
	// was killed, in case a process escaped the group with the pipes, and
	// how long a timed-out shell interpreter may take to unwind.
	pipeGrace = 2 * time.Second
)

// procSpec is one subprocess to run.
type procSpec struct {
	Dir      string
	Argv     []string
	Env      []string
	Timeout  time.Duration
	MaxChars int // per stream
}

// procResult is what a subprocess did. ExitCode is -1 when it was killed.
type procResult struct {
	ExitCode int    `json:"exitCode"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	TimedOut bool   `json:"timedOut"`

	stdoutCut bool // stdout exceeded the cap
}

// errCancelled reports a subprocess stopped because the call was cancelled.
var errCancelled = errors.New("cancelled")

// runProcess runs argv in its own process group with stdin on /dev/null.
// The git tools use it with a fixed argv; shell commands go through
// runScript instead.
// On timeout or cancellation the whole group is killed; after the leader
// exits the group is killed as well, so no background child outlives the
// call. A start failure is returned as an error; everything after start is
// in the result.
func runProcess(ctx context.Context, spec procSpec) (procResult, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return procResult{}, fmt.Errorf("pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return procResult{}, fmt.Errorf("pipe: %w", err)
	}
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdout, cmd.Stderr = outW, errW // stdin nil: /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	startErr := cmd.Start()
	outW.Close()
	errW.Close()
	if startErr != nil {
		outR.Close()
		errR.Close()
		return procResult{}, fmt.Errorf("start %s: %w", spec.Argv[0], startErr)
	}
	pgid := cmd.Process.Pid
	limit := spec.MaxChars * utf8.UTFMax
	stdout, stderr := newCapture(limit), newCapture(limit)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); _, _ = io.Copy(stdout, outR) }()
	go func() { defer readers.Done(); _, _ = io.Copy(stderr, errR) }()

	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	timer := time.NewTimer(spec.Timeout)
	defer timer.Stop()
	var res procResult
	var runErr error
	select {
	case <-waited:
	case <-timer.C:
		res.TimedOut = true
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-waited
	case <-ctx.Done():
		runErr = errCancelled
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-waited
	}
	// Reap what the leader left running in its group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)

	drainPipes(&readers, outR, errR)

	res.ExitCode = cmd.ProcessState.ExitCode()
	res.Stdout, res.stdoutCut = stdout.text(spec.MaxChars)
	res.Stderr, _ = stderr.text(spec.MaxChars)
	return res, runErr
}

// drainPipes waits for the readers copying from pipes to finish, at most
// pipeGrace (a process that escaped its group may still hold a write end),
// then closes the pipes, which ends the readers.
func drainPipes(readers *sync.WaitGroup, pipes ...*os.File) {
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	grace := time.NewTimer(pipeGrace)
	select {
	case <-drained:
	case <-grace.C:
	}
	grace.Stop()
	for _, p := range pipes {
		p.Close()
	}
	<-drained
}

// capture keeps the first and last limit bytes of a stream.
type capture struct {
	mu    sync.Mutex
	limit int
	head  []byte
	tail  []byte
	total int64
}

func newCapture(limit int) *capture { return &capture{limit: limit} }

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	rest := p
	if room := c.limit - len(c.head); room > 0 {
		n := min(room, len(rest))
		c.head = append(c.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		c.tail = append(c.tail, rest...)
		if len(c.tail) > 2*c.limit {
			c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.limit:]...)
		}
	}
	return len(p), nil
}

// text renders the stream, keeping its start and end when it exceeds max
// characters, with a marker in between.
func (c *capture) text(max int) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := c.tail
	if len(tail) > c.limit {
		tail = tail[len(tail)-c.limit:]
	}
	dropped := c.total - int64(len(c.head)) - int64(len(tail))
	s := decodeUTF8(append(append([]byte{}, c.head...), tail...))
	n := utf8.RuneCountInString(s)
	if n <= max && dropped == 0 {
		return s, false
	}
	half := max / 2
	head, _ := cutRunes(s, half)
	rs := []rune(s)
	end := string(rs[max32(len(rs)-half, 0):])
	return fmt.Sprintf("%s\n[… output truncated: %d bytes in all, only the first and last %d characters are shown …]\n%s",
		head, c.total, half, end), true
}

func max32(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// callTimeout is a call's timeout: the requested seconds when below the
// deployment's ceiling, else the ceiling. A call can lower it, never raise it.
func callTimeout(env *Env, requested *float64) (time.Duration, *Result) {
	ceiling := env.TimeoutCeiling
	if ceiling <= 0 {
		ceiling = defaultTimeoutCeiling
	}
	if requested == nil {
		return ceiling, nil
	}
	s := *requested
	if math.IsNaN(s) || s <= 0 {
		r := Fail(KindInvalidArguments, "timeoutSeconds must be greater than zero")
		return 0, &r
	}
	if s >= ceiling.Seconds() {
		return ceiling, nil
	}
	return time.Duration(s * float64(time.Second)), nil
}

// SubprocessEnv is the environment every subprocess gets: this process's
// environment without provider keys or secrets (see ScrubEnv).
func SubprocessEnv() []string { return ScrubEnv(os.Environ()) }

// ScrubEnv drops secret-bearing variables from an environment list:
// OPENAI_API_KEY, ANTHROPIC_API_KEY, every GUILDHALL_* variable, and every
// name ending (case-insensitively) in _API_KEY, _APIKEY, _TOKEN, _SECRET,
// _SECRET_KEY, _ACCESS_KEY, _PRIVATE_KEY, _PASSWORD, _PASSWD or
// _CREDENTIALS. Malformed entries (no '=') are dropped too.
func ScrubEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || secretEnvName(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func secretEnvName(name string) bool {
	n := strings.ToUpper(name)
	switch n {
	case "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "API_KEY", "TOKEN", "SECRET", "PASSWORD":
		return true
	}
	if strings.HasPrefix(n, "GUILDHALL_") {
		return true
	}
	for _, suffix := range []string{"_API_KEY", "_APIKEY", "_TOKEN", "_SECRET", "_SECRET_KEY",
		"_ACCESS_KEY", "_PRIVATE_KEY", "_PASSWORD", "_PASSWD", "_CREDENTIALS"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return false
}
