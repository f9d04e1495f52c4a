package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/guildhall/guildhall/tools/sandbox"
)

// Check is the verdict of a validation.
type Check struct {
	Pass bool `json:"pass"`
	// Reasons say what failed, one per expectation, in the order checked.
	Reasons  []string `json:"reasons,omitempty"`
	ExitCode int      `json:"exitCode"`
	TimedOut bool     `json:"timedOut,omitempty"`
	// Stdout and Stderr are the command's output, cut to maxShownOutput
	// (workspace text: untrusted, escaped wherever it is shown).
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// Validator runs validations. Each command runs in a sandbox of its own,
// opened after the run has ended, with the network off and the
// environment it is given: nothing the model started is alive, and the
// model cannot see or change the expectations.
type Validator struct {
	Host   *sandbox.Host
	Policy sandbox.Policy
	// Env is the command's environment (PATH, HOME, TMPDIR, caches).
	Env []string
}

const (
	defaultValidationTimeout = 60 * time.Second
	// maxValidationOutput is what the command's output is cut to before
	// it is searched: enough for any test runner's summary line.
	maxValidationOutput = 64 << 10
	maxShownOutput      = 4000
	maxCheckedFile      = 4 << 20
)

// Validate judges the workspace ws against v: expected files, their
// contents, then the command's exit code and stdout. Every failure is a
// reason; an error means the validation could not be carried out.
func (va Validator) Validate(ctx context.Context, ws string, v Validation) (Check, error) {
	root, err := os.OpenRoot(ws)
	if err != nil {
		return Check{}, fmt.Errorf("open the workspace: %w", err)
	}
	defer root.Close()
	var c Check
	for _, f := range v.ExpectedFiles {
		if _, err := regularFile(root, f); err != nil {
			c.Reasons = append(c.Reasons, fmt.Sprintf("expected file %s: %v", f, err))
		}
	}
	for _, f := range slices.Sorted(maps.Keys(v.ExpectedFileContains)) {
		c.Reasons = append(c.Reasons, checkContents(root, f, v.ExpectedFileContains[f], true)...)
	}
	for _, f := range slices.Sorted(maps.Keys(v.ExpectedFileLacks)) {
		c.Reasons = append(c.Reasons, checkContents(root, f, v.ExpectedFileLacks[f], false)...)
	}
	if strings.TrimSpace(v.Command) != "" {
		if err := va.command(ctx, ws, v, &c); err != nil {
			return c, err
		}
	}
	c.Pass = len(c.Reasons) == 0
	return c, nil
}

func (va Validator) command(ctx context.Context, ws string, v Validation, c *Check) error {
	canon, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return err
	}
	host := va.Host
	if host == nil {
		host = sandbox.NewHost()
	}
	sb, err := host.Open(sandbox.Options{Policy: va.Policy, Workspace: canon})
	if err != nil {
		return fmt.Errorf("sandbox for the validation: %w", err)
	}
	defer sb.Close()
	timeout := defaultValidationTimeout
	if v.TimeoutSeconds > 0 {
		timeout = time.Duration(v.TimeoutSeconds * float64(time.Second))
	}
	res, err := sb.Run(ctx, sandbox.Script{Dir: canon, Command: v.Command, Env: va.Env, Timeout: timeout, MaxChars: maxValidationOutput})
	var se *sandbox.StartError
	if errors.As(err, &se) {
		return fmt.Errorf("validation command: %w", err)
	}
	if err != nil {
		return fmt.Errorf("validation command: %w", err)
	}
	c.ExitCode, c.TimedOut = res.ExitCode, res.TimedOut
	c.Stdout, c.Stderr = clip(res.Stdout, maxShownOutput), clip(res.Stderr, maxShownOutput)
	if res.TimedOut {
		c.Reasons = append(c.Reasons, fmt.Sprintf("the validation command timed out after %s", timeout))
		return nil
	}
	if want := v.ExitCode(); res.ExitCode != want {
		c.Reasons = append(c.Reasons, fmt.Sprintf("expected exit code %d, got %d", want, res.ExitCode))
	}
	for _, needle := range v.ExpectedStdoutContains {
		if !strings.Contains(res.Stdout, needle) {
			c.Reasons = append(c.Reasons, fmt.Sprintf("stdout lacks %q", needle))
		}
	}
	if v.ExpectedStdoutMatches != "" {
		if re, err := regexp.Compile(v.ExpectedStdoutMatches); err == nil && !re.MatchString(res.Stdout) {
			c.Reasons = append(c.Reasons, fmt.Sprintf("stdout does not match %q", v.ExpectedStdoutMatches))
		}
	}
	return nil
}

// regularFile opens name inside root and checks it is a regular file.
func regularFile(root *os.Root, name string) (*os.File, error) {
	fi, err := root.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("missing")
	case err != nil:
		return nil, errors.New("not readable inside the workspace")
	case !fi.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, errors.New("not readable inside the workspace")
	}
	return f, nil
}

func checkContents(root *os.Root, file string, texts StringList, want bool) []string {
	f, err := regularFile(root, file)
	if err != nil {
		if want {
			return []string{fmt.Sprintf("expected file %s: %v", file, err)}
		}
		return nil // a file that is gone contains nothing it must lack
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCheckedFile))
	if err != nil {
		return []string{fmt.Sprintf("read %s: %v", file, err)}
	}
	var out []string
	for _, t := range texts {
		if has := strings.Contains(string(b), t); has != want {
			if want {
				out = append(out, fmt.Sprintf("%s lacks %q", file, t))
			} else {
				out = append(out, fmt.Sprintf("%s contains %q", file, t))
			}
		}
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "\n[… cut]"
}
