package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/tui"
)

// notifyGrace is how long a console about to exit waits for the command
// of an alert it already read (the end of the run that made it exit).
const notifyGrace = 10 * time.Second

// consoleAlerts is how the console's terminal tells of alerts, from the
// deployment's notify section and the terminal the environment names.
func consoleAlerts(d *runner.Deployment) tui.Alerts {
	return tui.Alerts{Bell: d.Notify.BellOn(), Desktop: tui.DesktopFor(d.Notify.Desktop, os.Getenv)}
}

// startNotify runs the deployment's notify.command, when it has one, for
// the session's alerts, in the console and after it detached alike. The
// returned stop lets an alert already read run, then prints the first
// failure, if any, to errOut: while the console is open, its terminal is
// not for printing.
func startNotify(s runner.Subscriber, d *runner.Deployment, errOut io.Writer) (stop func()) {
	if len(d.Notify.Command) == 0 {
		return func() {}
	}
	var mu sync.Mutex
	var first error
	n := runner.StartNotifier(s, d.Notify.Command, nil, func(_ runner.Alert, err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	})
	return func() {
		n.Stop(notifyGrace)
		mu.Lock()
		defer mu.Unlock()
		if first != nil {
			fmt.Fprintln(errOut, "note:", render.SanitizeLine(first.Error()))
		}
		if d := n.Dropped(); d > 0 {
			fmt.Fprintf(errOut, "note: %d alerts came faster than notify.command ran and were not sent\n", d)
		}
	}
}
