package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/guildhall/guildhall/render"
)

// editor is the console's text editor: the Compose task, the question
// modals' answers, the interrupt message, the queue item editor and the
// transcript search. It wraps bubbles' textarea, which does the editing,
// soft wrapping and scrolling, and keeps the console's own rules around it:
//
//   - The owner routes keys to HandleKey and learns whether the editor used
//     the key. Plain enter is left to the owner (it submits in most
//     places); alt+enter (and ctrl+j) insert a newline in a multiline
//     editor. The textarea's clipboard paste (ctrl+v) is off: it would read
//     the clipboard of whatever machine the console runs on, and a
//     terminal's bracketed paste already arrives as typed text.
//   - Text is sanitized as it comes in (typed, pasted or set), with
//     render.Sanitize: terminal control never enters the buffer, and
//     bidirectional controls become their visible ⟪U+…⟫ form. What the
//     textarea draws is therefore safe without a second pass.
//   - The owner sizes the editor in Update (SetSize); Render draws it and
//     changes nothing the next frame depends on.
//
// The zero editor is usable: the textarea is made on first use.
type editor struct {
	placeholder string
	singleLine  bool
	ta          *textarea.Model
}

// model returns the textarea, making it on first use.
func (e *editor) model() *textarea.Model {
	if e.ta != nil {
		return e.ta
	}
	ta := textarea.New()
	ta.Prompt = "│ "
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.MaxWidth = 0
	ta.EndOfBufferCharacter = ' '
	ta.Placeholder = e.placeholder
	plain := textarea.Style{
		Base:        lipgloss.NewStyle(),
		CursorLine:  lipgloss.NewStyle(),
		EndOfBuffer: lipgloss.NewStyle(),
		Placeholder: styleFaint.lip(),
		Prompt:      lipgloss.NewStyle(),
		Text:        lipgloss.NewStyle(),
	}
	ta.FocusedStyle, ta.BlurredStyle = plain, plain
	ta.Cursor.SetMode(cursor.CursorStatic)
	km := textarea.DefaultKeyMap
	km.Paste = key.NewBinding(key.WithDisabled())
	km.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	if e.singleLine {
		km.InsertNewline = key.NewBinding(key.WithDisabled())
		km.LineNext = key.NewBinding(key.WithDisabled())
		km.LinePrevious = key.NewBinding(key.WithDisabled())
	}
	ta.KeyMap = km
	ta.Focus()
	ta.SetWidth(40)
	ta.SetHeight(1)
	e.ta = &ta
	return e.ta
}

// clean sanitizes incoming text; a single-line editor gets spaces for
// newlines and tabs.
func (e *editor) clean(s string) string {
	s = render.Sanitize(s)
	if e.singleLine {
		s = strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
	}
	return s
}

// Value is the text.
func (e *editor) Value() string {
	if e.ta == nil {
		return ""
	}
	return e.ta.Value()
}

// SetValue replaces the text and puts the cursor at its end.
func (e *editor) SetValue(s string) { e.model().SetValue(e.clean(s)) }

// Reset empties the editor.
func (e *editor) Reset() {
	if e.ta != nil {
		e.ta.Reset()
	}
}

// Empty reports whether there is no text.
func (e *editor) Empty() bool { return strings.TrimSpace(e.Value()) == "" }

// Newline splits the line at the cursor (no-op in a single-line editor).
func (e *editor) Newline() {
	if e.singleLine {
		return
	}
	e.update(tea.KeyMsg{Type: tea.KeyCtrlJ})
}

// SetSize sizes the editor: width cells including its "│ " gutter, height
// rows. Owners call it from Update when the layout changes.
func (e *editor) SetSize(width, height int) {
	ta := e.model()
	width, height = max(4, width), max(1, height)
	if ta.Width() != width-2 {
		ta.SetWidth(width)
	}
	if ta.Height() != height {
		ta.SetHeight(height)
	}
}

func (e *editor) update(k tea.KeyMsg) {
	ta := e.model()
	*ta, _ = ta.Update(k)
}

// HandleKey applies an editing key and reports whether it used it.
func (e *editor) HandleKey(k tea.KeyMsg) bool {
	ta := e.model()
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		if k.Alt && !k.Paste {
			// alt+letter: a word motion when the textarea binds it, else
			// the owner's.
			if key.Matches(k, e.bindings()...) {
				e.update(k)
				return true
			}
			return false
		}
		runes := k.Runes
		if k.Type == tea.KeySpace && len(runes) == 0 {
			runes = []rune{' '}
		}
		text := e.clean(string(runes))
		if text == "" {
			return true
		}
		// Inserted, not sent through Update: the textarea matches key
		// bindings by name, so a burst of typed runes that spells "right",
		// "left" or "home" would move the cursor instead of appearing.
		e.model().InsertString(text)
		return true
	case tea.KeyEnter:
		if k.Alt && !e.singleLine {
			e.update(k)
			return true
		}
		return false
	case tea.KeyUp:
		// The first line leaves up to the owner (option pickers).
		if e.singleLine || ta.Line() == 0 && ta.LineInfo().RowOffset == 0 {
			return false
		}
	case tea.KeyDown:
		li := ta.LineInfo()
		if e.singleLine || ta.Line() == ta.LineCount()-1 && li.RowOffset >= li.Height-1 {
			return false
		}
	}
	if !key.Matches(k, e.bindings()...) {
		return false
	}
	e.update(k)
	return true
}

// bindings are every editing key the textarea has.
func (e *editor) bindings() []key.Binding {
	km := e.model().KeyMap
	return []key.Binding{
		km.CharacterBackward, km.CharacterForward, km.DeleteAfterCursor, km.DeleteBeforeCursor,
		km.DeleteCharacterBackward, km.DeleteCharacterForward, km.DeleteWordBackward, km.DeleteWordForward,
		km.InsertNewline, km.LineEnd, km.LineNext, km.LinePrevious, km.LineStart, km.WordBackward,
		km.WordForward, km.InputBegin, km.InputEnd, km.UppercaseWordForward, km.LowercaseWordForward,
		km.CapitalizeWordForward, km.TransposeCharacterBackward,
	}
}

// Render draws the editor at the size SetSize gave it, with the cursor when
// focused. It draws a copy, so the frame changes nothing in the editor.
func (e *editor) Render(focused bool) []string {
	if e.ta == nil {
		// Never sized or typed into: the placeholder.
		line := "│ " + styleFaint.Render(e.placeholder)
		if focused {
			line = "│ " + styleCursor.Render(" ") + styleFaint.Render(e.placeholder)
		}
		return []string{line}
	}
	ta := *e.ta
	ta.Placeholder = e.placeholder
	if !focused {
		ta.Blur()
	}
	return strings.Split(strings.TrimRight(ta.View(), "\n"), "\n")
}
