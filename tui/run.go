package tui

import (
	"context"
	"fmt"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/term"
)

// RunOptions are the program's terminal options.
type RunOptions struct {
	Input  io.Reader // default os.Stdin
	Output io.Writer // default os.Stdout
	// NoAltScreen keeps the console in the normal screen (tests).
	NoAltScreen bool
}

// Run shows the console until the operator quits or ctx ends (a signal, the
// terminal going away). The caller closes the session afterwards, which
// stops a live run at a safe point and leaves it resumable. The terminal is
// restored even when the program panics.
func Run(ctx context.Context, s Session, opts Options, ro RunOptions) (err error) {
	if ro.Output == nil {
		ro.Output = os.Stdout
	}
	if opts.Output == nil {
		opts.Output = ro.Output
	}
	if opts.Context == nil {
		opts.Context = ctx
	}
	if opts.Clipboard == "" {
		opts.Clipboard = os.Getenv("GUILDHALL_CLIPBOARD")
	}
	if opts.Editor == "" {
		opts.Editor = editorCommand(os.Getenv)
	}
	if opts.ClipboardFile == "" {
		opts.ClipboardFile = defaultClipboardFile(os.Getenv)
	}
	if f, ok := ro.Output.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) || noOSC52Term(os.Getenv("TERM")) {
		opts.NoOSC52 = true
	}
	if opts.TmuxClipboard == nil && os.Getenv("TMUX") != "" {
		opts.TmuxClipboard = tmuxClipboardOption
	}
	if f, ok := ro.Output.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		opts.Alerts = Alerts{}
	}
	// The mouse is the terminal's until the operator asks (M): plain
	// selection works without Shift.
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(ro.Output)}
	if opts.Mouse {
		popts = append(popts, tea.WithMouseCellMotion())
	}
	if ro.Input != nil {
		popts = append(popts, tea.WithInput(ro.Input))
	}
	if !ro.NoAltScreen {
		popts = append(popts, tea.WithAltScreen())
	}
	p := tea.NewProgram(New(s, opts), popts...)
	defer func() {
		if r := recover(); r != nil {
			// Bubble Tea restores the terminal for panics in its own
			// goroutines; this covers the rest, then reports.
			_ = p.ReleaseTerminal()
			err = fmt.Errorf("console crashed: %v", r)
		}
	}()
	_, err = p.Run()
	if err != nil && (ctx.Err() != nil) {
		// Cancelled by a signal or a closed terminal: not a failure of the
		// console.
		return nil
	}
	return err
}
