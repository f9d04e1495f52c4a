//go:build linux

package tui

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/ptytest"
)

// TestDetectThemeHelper is the process whose controlling terminal is the
// pseudo-terminal of TestDetectThemeOnATerminal: it resolves "auto" on
// its standard output, as guildhall does at start, and writes the answer
// to the file named by GUILDHALL_THEME_HELPER.
func TestDetectThemeHelper(t *testing.T) {
	out := os.Getenv("GUILDHALL_THEME_HELPER")
	if out == "" {
		t.Skip("run by TestDetectThemeOnATerminal")
	}
	got := DetectTheme(ThemeAuto, os.Stdout)
	if err := os.WriteFile(out, []byte(got), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDetectThemeOnATerminal: "auto" on a real (pseudo-)terminal asks for
// the background colour, once in the process, and follows the answer; a
// terminal that ignores the query, or answers nothing at all, gives the
// dark theme and does not hang the start.
func TestDetectThemeOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process on a pseudo-terminal")
	}
	for _, c := range []struct {
		name string
		// answer is what the terminal says to the OSC 11 query and the
		// cursor position request that follows it, or nothing.
		answer string
		want   string
	}{
		{"white background", "\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[1;1R", ThemeLight},
		{"Solarized light", "\x1b]11;rgb:fdfd/f6f6/e3e3\x07\x1b[1;1R", ThemeLight},
		{"black background", "\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[1;1R", ThemeDark},
		{"no OSC 11", "\x1b[1;1R", ThemeDark},
		// termenv waits its OSCTimeout (5 s) for the first byte, then
		// gives up.
		{"no answer at all", "", ThemeDark},
	} {
		t.Run(c.name, func(t *testing.T) {
			master, slave := openTestPTY(t)
			result := filepath.Join(t.TempDir(), "theme")
			cmd := exec.Command(os.Args[0], "-test.run=^TestDetectThemeHelper$", "-test.count=1")
			cmd.Env = append(withoutEnv(os.Environ(), "CI", "TERM", "COLORFGBG"), "TERM=xterm-256color", "GUILDHALL_THEME_HELPER="+result)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close()
			// Read what the helper writes, answering the query once.
			transcript := make(chan string, 1)
			go func() {
				var seen bytes.Buffer
				buf := make([]byte, 256)
				answered := false
				for {
					n, err := master.Read(buf)
					seen.Write(buf[:n])
					if !answered && strings.Contains(seen.String(), "\x1b[6n") {
						answered = true
						if c.answer != "" {
							_, _ = master.WriteString(c.answer)
						}
					}
					if err != nil { // EIO once the helper has exited
						transcript <- seen.String()
						return
					}
				}
			}()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("the helper failed: %v", err)
				}
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("detection did not return: it hangs when the terminal does not answer")
			}
			if n := strings.Count(<-transcript, "\x1b]11;?"); n != 1 {
				t.Errorf("the terminal was asked for its background %d times, want once", n)
			}
			got, err := os.ReadFile(result)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("theme %q, want %q", got, c.want)
			}
		})
	}
}

func withoutEnv(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// openTestPTY opens a pseudo-terminal: its master, and its slave opened.
func openTestPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, path := ptytest.Open(t)
	slave, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}
