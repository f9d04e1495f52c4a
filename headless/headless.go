// Package headless is the terminal-less client of a session, for
// `guildhall run`, `resume` and `queue run`: it prints the session's events
// as escape-safe lines (or the log's NDJSON), and answers the questions a
// run waits on from standard input.
package headless

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
)

// Options say how Print prints and where answers come from.
type Options struct {
	// JSON prints each event as its log line instead of a headless line.
	JSON bool
	// Interactive answers questions from In; otherwise the run gets them
	// answered as "no operator available" by its own configuration.
	Interactive bool
	// In is read a line an answer (an option's number picks the option).
	In io.Reader
	// BrowserAnswers says a browser companion can still answer once In
	// ends; without one, the end of In makes the session unattended.
	BrowserAnswers bool
	// Notices receives the one notice Print writes itself: that standard
	// input closed.
	Notices io.Writer
}

// promptDelay is how long a question's prompt waits for a sign that the
// run parked it rather than waiting on it (a display choice only: answers
// never depend on it).
const promptDelay = 300 * time.Millisecond

// Print prints a session's events (every run it starts) to out until the
// subscription closes. When interactive, a question the run waits on is
// shown with its options and a prompt, and each line typed answers the
// oldest pending question. A parked question gets no prompt (the queue
// reports it): a parked run withdraws its question before it logs the next
// event, so the prompt is shown once the next event arrives, or after
// promptDelay, and only if the question is still pending.
func Print(sub *runner.Subscription, out io.Writer, sess *runner.Session, o Options) {
	answering := false
	var asked *event.AskHumanPayload
	prompt := func() {
		q := asked
		asked = nil
		if q == nil || !slices.ContainsFunc(sess.Questions(), func(p runner.Question) bool { return p.ID == q.ID }) {
			return
		}
		if !answering {
			answering = true
			go answerFromLines(sess, o)
		}
		if o.JSON {
			return
		}
		if q.Context != "" {
			fmt.Fprintln(out, "  context:", render.Sanitize(q.Context))
		}
		for i, opt := range q.Options {
			fmt.Fprintf(out, "  %d. %s\n", i+1, render.SanitizeLine(opt.Label))
		}
		fmt.Fprint(out, "answer> ")
	}
	for {
		var e event.Event
		var ok bool
		if asked == nil {
			e, ok = sub.Next()
		} else {
			timer := time.NewTimer(promptDelay)
			select {
			case e, ok = <-sub.C:
			case <-sub.Done():
				e, ok = sub.Next()
			case <-timer.C:
				prompt()
				continue
			}
			timer.Stop()
			prompt()
		}
		if !ok {
			return
		}
		if e.Ephemeral {
			continue
		}
		if o.JSON {
			_, _ = out.Write(append(e.AppendJSON(nil), '\n'))
		} else if line, ok := render.HeadlessLine(e); ok {
			fmt.Fprintln(out, line)
		}
		if e.Type == event.AskHuman && o.Interactive {
			var q event.AskHumanPayload
			if e.Decode(&q) == nil {
				asked = &q
			}
		}
	}
}

// answerFromLines answers the session's oldest pending question with each
// line read (an option's number picks that option). Lines typed while no
// question is pending are dropped. The answers are recorded as coming from
// the terminal, or from stdin when it is not one (a pipe, a file).
func answerFromLines(sess *runner.Session, o Options) {
	source := "stdin"
	if f, ok := o.In.(*os.File); ok && IsTerminal(f) {
		source = "terminal"
	}
	sc := bufio.NewScanner(o.In)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		pending := sess.Questions()
		if len(pending) == 0 {
			continue
		}
		q := pending[0]
		answer := strings.TrimSpace(sc.Text())
		if n, err := strconv.Atoi(answer); err == nil && n >= 1 && n <= len(q.Options) {
			answer = q.Options[n-1].Label
		}
		_ = sess.Answer(q.ID, answer, source)
	}
	// End of input: unless a browser can still answer, nobody will, and a
	// question must not wait forever.
	if !o.BrowserAnswers {
		fmt.Fprintln(o.Notices, "\nguildhall: standard input closed; questions now get \"no operator available\" (use --no-input to say so up front)")
		sess.Unattended()
	}
}

// IsTerminal reports whether f is a terminal: a character device that
// answers the terminal ioctl, so /dev/null (a character device too) is not.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
