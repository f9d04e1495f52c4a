package main

// End-to-end tests of what the demo advertises, through the real binary
// in a tmux pane: an inquiry (i), a plan change (i, tab) and a follow-up
// that continues the run (n, ctrl+o, ctrl+s). They assert on the screen.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// demoPane is `guildhall demo` in a detached pane on a tmux server of its
// own, so no other tmux user (or its environment) is involved.
type demoPane struct {
	t          *testing.T
	sock, name string
	dir        string // exit status and stderr land here
}

func startDemoPane(t *testing.T, args ...string) *demoPane {
	t.Helper()
	return startDemoPaneEnv(t, nil, args...)
}

// startDemoPaneEnv is startDemoPane with more environment (NAME=value).
func startDemoPaneEnv(t *testing.T, extra []string, args ...string) *demoPane {
	t.Helper()
	needTmux(t)
	bin := hostileBinary(t)
	p := &demoPane{t: t, sock: fmt.Sprintf("gh-demo-%d-%d", os.Getpid(), time.Now().UnixNano()), name: "demo", dir: t.TempDir()}
	env := []string{"TERM=xterm-256color"}
	for _, k := range []string{"XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "HOME", "PATH"} {
		env = append(env, k+"="+os.Getenv(k))
	}
	env = append(env, extra...)
	script := fmt.Sprintf("env %s %s demo %s 2>%s; echo $? > %s; sleep 60",
		strings.Join(env, " "), bin, strings.Join(args, " "), filepath.Join(p.dir, "stderr"), filepath.Join(p.dir, "status"))
	p.tmux("new-session", "-d", "-s", p.name, "-x", "100", "-y", "30", script)
	t.Cleanup(func() { exec.Command("tmux", "-L", p.sock, "kill-server").Run() })
	return p
}

func (p *demoPane) tmux(args ...string) {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
}

func (p *demoPane) screen() string {
	out, _ := exec.Command("tmux", "-L", p.sock, "capture-pane", "-p", "-t", p.name).CombinedOutput()
	return string(out)
}

// waitFor polls the pane until it shows every string, and returns it.
func (p *demoPane) waitFor(what ...string) string {
	p.t.Helper()
	s, ok := showing(90*time.Second, p.screen, what)
	if !ok {
		p.t.Fatalf("the console never showed %q; last screen:\n%s", what, s)
	}
	return s
}

// keys sends tmux key names one at a time (tmux reads "Escape x" as alt+x).
func (p *demoPane) keys(keys ...string) {
	p.t.Helper()
	for _, k := range keys {
		p.tmux("send-keys", "-t", p.name, k)
		time.Sleep(80 * time.Millisecond)
	}
}

// typeText types literal text.
func (p *demoPane) typeText(s string) {
	p.t.Helper()
	p.tmux("send-keys", "-t", p.name, "-l", s)
	time.Sleep(80 * time.Millisecond)
}

// quit presses q and checks the demo exited 0.
func (p *demoPane) quit() {
	p.t.Helper()
	p.keys("q")
	waitExitStatus(p.t, filepath.Join(p.dir, "status"), filepath.Join(p.dir, "stderr"), p.screen)
}

// answerScope answers the demo's one question.
func (p *demoPane) answerScope() {
	p.t.Helper()
	p.waitFor("Question", "1. Only fix the failing tests")
	p.keys("1", "Enter")
}

func TestDemoConsoleAnswersAnInquiry(t *testing.T) {
	p := startDemoPane(t, "--speed", "0")
	p.waitFor("Question", "1. Only fix the failing tests")
	// Put the question aside, ask the run something meanwhile: the run is
	// waiting in ask_human, so the inquiry is answered at the next safe
	// point, right after the scope question is answered.
	p.keys("Escape", "i")
	p.waitFor("Ask the run a question", "No inquiries yet.")
	p.typeText("What are you doing right now?")
	p.keys("Enter")
	// The waiting question's banner takes the notice line.
	p.waitFor("A question is waiting for you: press a to answer.")
	p.keys("a")
	p.answerScope()
	s := p.waitFor("Answer from the run", "You asked: What are you doing right now?", "The orchestrator is deciding the next step.")
	if strings.Contains(s, "no more replies") {
		t.Fatalf("the scripted model ran out:\n%s", s)
	}
	// The run went on undisturbed: its result card comes next.
	p.keys("Escape")
	p.waitFor("Result · run-", "Status: ✓ success", "Slug tests fixed")
	p.keys("Escape")
	// Once the run has ended there is nothing to interrupt.
	p.keys("i")
	p.waitFor("there is nothing to interrupt. n composes a follow-up.")
	p.quit()
	stderr, _ := os.ReadFile(filepath.Join(p.dir, "stderr"))
	if !strings.Contains(string(stderr), "demo workspace: ") || !strings.Contains(string(stderr), "run with --keep to keep it") {
		t.Errorf("the demo does not say how to keep its workspace:\n%s", stderr)
	}
}

func TestDemoConsoleUnwindsAPlanChange(t *testing.T) {
	// Slower than written, so the coder is still at work when the change
	// lands (its turns take about 7 s at this speed).
	p := startDemoPane(t, "--speed", "2")
	p.answerScope()
	p.waitFor("● Coder")
	p.keys("i", "Tab")
	p.waitFor("▸ Change its plan")
	p.typeText("Keep the fix to one sed expression")
	p.keys("Enter")
	p.waitFor("Plan change sent")
	// The coder finished interrupted (■, not the ✗ of an error) and a
	// second planner is at work.
	p.waitFor("■ Coder", "Planner ×2", "● Planner")
	s := p.waitFor("Result · run-", "Status: ✓ success", "Slug tests fixed, after your plan change", "Keep the fix to one sed expression")
	if strings.Contains(s, "no more replies") {
		t.Fatalf("the scripted model ran out:\n%s", s)
	}
	p.keys("Escape")
	// The revised plan records the change.
	p.keys("p")
	p.waitFor("Plan (revised)", "The operator's change", "Keep the fix to one sed expression")
	p.keys("Escape")
	p.quit()
}

func TestDemoConsoleContinuesWithAFollowUp(t *testing.T) {
	p := startDemoPane(t, "--speed", "0")
	p.answerScope()
	s := p.waitFor("Result · run-", "Status: ✓ success", "n new task")
	first := regexp.MustCompile(`Result · (run-\d{8}-\d{6})`).FindStringSubmatch(s)
	if first == nil {
		t.Fatalf("no run id on the result card:\n%s", s)
	}
	p.keys("n")
	p.waitFor("New task", "Continue from")
	p.typeText("Now handle accented letters too")
	p.keys("C-o")
	p.waitFor("Continue from · enter picks", first[1])
	p.keys("Enter")
	p.waitFor("Continue from "+first[1], "Prior task", "Result summary")
	p.keys("C-s")
	s = p.waitFor("Result · run-", "Accented letters handled", "creme-brulee")
	if strings.Contains(s, "Result · "+first[1]) {
		t.Fatalf("the first run's card is still shown:\n%s", s)
	}
	p.keys("Escape", "h", "g")
	// The thread shows the follow-up continuing the first run.
	for i := 0; i < 10 && !strings.Contains(p.screen(), "continuing "+first[1]); i++ {
		p.keys("PgDn")
	}
	p.waitFor("Task history", "continuing "+first[1], "Now handle accented letters too")
	p.keys("Escape")
	p.quit()
}
