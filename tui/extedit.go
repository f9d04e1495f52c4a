package tui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render"
)

// ctrl+g hands the text of the box being typed in (the Compose task, a
// question's answer, the interrupt message, a queued task being edited) to
// the operator's own editor, $VISUAL or else $EDITOR, as crush and codex
// do, and takes the saved text back. The program is paused while the
// editor runs (tea.Exec): the editor has the terminal to itself, and the
// console redraws when it exits.
//
// Everything that touches the disk or starts a process happens in the
// ExecCommand's Run, which Bubble Tea calls outside Update. The text goes
// through a temporary file of the operator's only (0600), removed when the
// editor exits whatever happened. An editor that fails — not found, a
// non-zero exit, a file it removed — leaves the text as it was, and a
// notice says why. The text that comes back is sanitized as typed text is
// (editor.SetValue).

// extEditMax caps the text read back: the API takes 1 MiB bodies.
const extEditMax = 1 << 20

// editTarget names the box a ctrl+g edits, so that the text goes back to
// the same box, or nowhere when it closed while the editor ran (an
// answer from the browser closes a question).
type editTarget struct {
	box string // compose, answer, queue-answer, queue-edit, interrupt
	id  string // the question or queue item, for the boxes that have one
	// interrupt is the interrupt box that was open.
	interrupt *interruptState
}

// editedMsg is the editor's outcome.
type editedMsg struct {
	target editTarget
	text   string
	err    error
}

// editorCommand is the operator's editor: $VISUAL, else $EDITOR.
func editorCommand(getenv func(string) string) string {
	for _, name := range []string{"VISUAL", "EDITOR"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
	}
	return ""
}

// editExternally opens the operator's editor on the text of target's box.
func (m *Model) editExternally(target editTarget) tea.Cmd {
	ed := m.editTargetBox(target)
	if ed == nil {
		return nil
	}
	command := m.opts.Editor
	if command == "" {
		m.flashNote("ctrl+g opens your editor: set $VISUAL or $EDITOR (for example EDITOR=vi).")
		return nil
	}
	run := &extEditor{command: command, text: ed.Value()}
	return tea.Exec(run, func(err error) tea.Msg {
		return editedMsg{target: target, text: run.result, err: err}
	})
}

// editTargetBox is the editor of target's box while it is open.
func (m *Model) editTargetBox(t editTarget) *editor {
	switch t.box {
	case "compose":
		return &m.compose.editor
	case "answer":
		if len(m.questions) > 0 && m.questions[0].q.ID == t.id && !m.questions[0].sent {
			return &m.q.editor
		}
	case "queue-answer":
		if a := m.queue.answer; a != nil && a.id == t.id && !a.sent {
			return &a.editor
		}
	case "queue-edit":
		if e := m.queue.edit; e != nil && e.id == t.id {
			return &e.editor
		}
	case "interrupt":
		if m.interrupt != nil && m.interrupt == t.interrupt {
			return &m.interrupt.editor
		}
	}
	return nil
}

// applyEdited puts the edited text back in its box.
func (m *Model) applyEdited(msg editedMsg) {
	if msg.err != nil {
		m.flashNote("The editor did not save: " + render.SanitizeLine(msg.err.Error()) + ". The text is unchanged.")
		return
	}
	ed := m.editTargetBox(msg.target)
	if ed == nil {
		m.flashNote("The box you were editing closed while the editor ran: the edited text was not used.")
		return
	}
	ed.SetValue(msg.text)
	if msg.target.box == "answer" {
		m.q.opt = -1
	}
	if a := m.queue.answer; msg.target.box == "queue-answer" && a != nil {
		a.opt = -1
	}
}

// extEditor runs the editor on a temporary file holding text; result is
// the saved text.
type extEditor struct {
	command string
	text    string
	result  string

	stdin          io.Reader
	stdout, stderr io.Writer
}

func (e *extEditor) SetStdin(r io.Reader)  { e.stdin = r }
func (e *extEditor) SetStdout(w io.Writer) { e.stdout = w }
func (e *extEditor) SetStderr(w io.Writer) { e.stderr = w }

// Run writes the file, runs the editor on it and reads it back.
func (e *extEditor) Run() error {
	f, err := os.CreateTemp("", "guildhall-edit-*.md") // mode 0600
	if err != nil {
		return fmt.Errorf("the temporary file cannot be made: %w", err)
	}
	name := f.Name()
	defer os.Remove(name)
	_, werr := f.WriteString(e.text)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("the temporary file cannot be written: %w", err)
	}
	cmd := editorProcess(e.command, name)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 127 {
			return fmt.Errorf("%s was not found (the shell's status 127)", firstWord(e.command))
		}
		if errors.As(err, &exit) {
			return fmt.Errorf("%s exited with status %d", firstWord(e.command), exit.ExitCode())
		}
		return fmt.Errorf("%s did not start: %w", firstWord(e.command), err)
	}
	text, err := readEdited(name)
	if err != nil {
		return err
	}
	e.result = text
	return nil
}

// editorProcess runs command on file the way git runs core.editor: through
// the shell, so that "code --wait" or "emacsclient -t" work, with the file
// as a separate argument that is never parsed.
func editorProcess(command, file string) *exec.Cmd {
	if runtime.GOOS == "windows" {
		args := strings.Fields(command)
		return exec.Command(args[0], append(args[1:], file)...)
	}
	return exec.Command("sh", "-c", command+` "$@"`, command, file)
}

// readEdited reads the saved file: a regular file of at most extEditMax
// bytes, with one trailing newline (which editors add) dropped.
func readEdited(name string) (string, error) {
	fi, err := os.Lstat(name)
	switch {
	case err != nil:
		return "", errors.New("the edited file is gone")
	case !fi.Mode().IsRegular():
		return "", errors.New("the edited file is not a regular file any more")
	case fi.Size() > extEditMax:
		return "", fmt.Errorf("the edited text is %s, more than the %s a box takes", byteSize(int(fi.Size())), byteSize(extEditMax))
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("the edited file cannot be read: %w", err)
	}
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	return strings.TrimSuffix(s, "\n"), nil
}

// firstWord names an editor command by its program.
func firstWord(command string) string {
	if f := strings.Fields(command); len(f) > 0 {
		return render.SanitizeLine(filepath.Base(f[0]))
	}
	return "the editor"
}
