package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/headless"
	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

func newQueueCmd(common *commonFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "List and manage the task queue (.orchestration/queue.json)",
		Long: `Tasks in the queue run one at a time, whenever this workspace's console (or
` + "`guildhall queue run`" + `) is idle. A queued run that asks a question before any
role that can change the workspace has started is parked: its item becomes
needs_input until you answer it, and the queue moves on.

With no subcommand, lists the queue.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return queueList(cmd, common, asJSON, false) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the items as JSON")
	cmd.AddCommand(
		newQueueAddCmd(common),
		newQueueListCmd(common),
		newQueueMoveCmd(common),
		newQueueCancelCmd(common),
		newQueueAnswerCmd(common),
		newQueueRequeueCmd(common),
		newQueueRunCmd(common),
		newQueueResetCmd(common),
	)
	return cmd
}

// queueOf resolves --workspace to its queue.
func queueOf(common *commonFlags) (store.Workspace, *store.Queue, error) {
	ws, err := common.records()
	if err != nil {
		return store.Workspace{}, nil, err
	}
	return ws, ws.Queue(), nil
}

// queueErr maps a queue error to its exit status: invalid input is a usage
// error (2); a missing item, a status that forbids the operation or a
// malformed queue.json is a runtime error (1).
func queueErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, store.ErrInvalid) {
		return usageErr(err)
	}
	if errors.Is(err, store.ErrQueueCorrupt) {
		err = fmt.Errorf("%w\nrepair it by hand, or move it aside with `guildhall queue reset`", err)
	} else if errors.Is(err, store.ErrNotFound) {
		err = fmt.Errorf("%w (see `guildhall queue ls`)", err)
	}
	return &exitCodeError{code: exitError, err: err}
}

func checkItemID(id string) error {
	if !store.ValidQueueID(id) {
		return usageErr(fmt.Errorf("%q is not a queue item id (they look like q-1767225600000-1; see `guildhall queue ls`)", id))
	}
	return nil
}

// position is an item's 1-based place among the waiting items (0 if it is
// not waiting) and the number waiting.
func position(q *store.Queue, id string) (int, int) {
	w, err := q.Waiting()
	if err != nil {
		return 0, 0
	}
	return slices.IndexFunc(w, func(it store.QueueItem) bool { return it.ID == id }) + 1, len(w)
}

func newQueueAddCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "add [--effort E] [--continue RUN_ID] [--log-level L] TASK",
		Short: "Add a task at the end of the queue",
		Args:  args{min: 1, max: 1, what: "the task to queue", example: `guildhall queue add "Add a --verbose flag"`, oneText: true}.validate,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := store.CheckEffort(common.effort); err != nil {
				return usageErr(fmt.Errorf("--effort: %w", err))
			}
			if err := store.CheckLogLevel(common.logLevel); err != nil {
				return usageErr(fmt.Errorf("--log-level: %w", err))
			}
			if err := common.checkTaskFlags(); err != nil {
				return err
			}
			ws, q, err := queueOf(common)
			if err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			it, err := q.Add(ctx, store.QueueSpec{Task: args[0], Effort: common.effort, LogLevel: common.logLevel, ContinuesFrom: common.continues})
			if err != nil {
				return queueErr(err)
			}
			out := cmd.OutOrStdout()
			pos, n := position(q, it.ID)
			fmt.Fprintf(out, "queued %s (position %d of %d)\n", it.ID, pos, n)
			lock, err := ws.AcquireLock()
			if err == nil {
				_ = lock.Release()
				fmt.Fprintln(out, "no session is running on this workspace: run the queue with `guildhall queue run`, or open `guildhall`")
			} else {
				var busy *store.BusyError
				if errors.As(err, &busy) {
					fmt.Fprintf(out, "the workspace is in use (pid %d); a console there runs the queue when it is idle\n", busy.PID)
				}
			}
			return nil
		},
	}
}

func newQueueListCmd(common *commonFlags) *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the queue: active, needs_input, waiting in run order, then recent settled items",
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return queueList(cmd, common, asJSON, all) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the items as JSON")
	cmd.Flags().BoolVar(&all, "all", false, "list every settled item, not only the latest 20")
	return cmd
}

// recentSettled is how many done/error/cancelled items ls shows.
const recentSettled = 20

func queueList(cmd *cobra.Command, common *commonFlags, asJSON, all bool) error {
	_, q, err := queueOf(common)
	if err != nil {
		return err
	}
	items, err := q.List()
	if err != nil {
		return queueErr(err)
	}
	out := cmd.OutOrStdout()
	if asJSON {
		if items == nil {
			items = []store.QueueItem{}
		}
		b, err := json.MarshalIndent(items, "", "  ")
		if err != nil {
			return &exitCodeError{code: exitError, err: err}
		}
		fmt.Fprintln(out, string(b))
		return nil
	}
	if len(items) == 0 {
		fmt.Fprintln(out, "the queue is empty; add a task with `guildhall queue add TASK`")
		return nil
	}
	writeQueue(out, items, all)
	return nil
}

// writeQueue prints items grouped: active, needs_input, waiting (numbered
// in run order), then settled items, latest first. Every field is
// sanitized: tasks, questions and errors come from operators and models.
func writeQueue(out io.Writer, items []store.QueueItem, all bool) {
	group := func(status string) []store.QueueItem {
		var g []store.QueueItem
		for _, it := range items {
			if it.Status == status && !it.Foreign {
				g = append(g, it)
			}
		}
		return g
	}
	var settled, foreign []store.QueueItem
	for _, it := range items {
		switch {
		case it.Foreign:
			foreign = append(foreign, it)
		case it.Settled():
			settled = append(settled, it)
		}
	}
	slices.SortStableFunc(settled, func(a, b store.QueueItem) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	hidden := 0
	if !all && len(settled) > recentSettled {
		hidden = len(settled) - recentSettled
		settled = settled[:recentSettled]
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSTATUS\tID\tEFFORT\tRUN\tTASK")
	row := func(n string, it store.QueueItem) {
		effort := it.Effort
		if effort == "" {
			effort = "-"
		}
		status := it.Status
		if it.Foreign {
			status = "foreign"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n, render.SanitizeLine(status), render.SanitizeLine(it.ID), render.SanitizeLine(effort),
			render.SanitizeLine(it.RunID), clipRunes(render.SanitizeLine(firstLine(it.Task)), 60))
		detail := func(label, text string) {
			if text = strings.TrimSpace(text); text != "" {
				fmt.Fprintf(tw, "\t\t\t\t\t  %s %s\n", label, clipRunes(render.SanitizeLine(text), 100))
			}
		}
		switch it.Status {
		case store.QueueNeedsInput:
			if it.Question != nil {
				q := it.Question.Text
				if len(it.Question.Options) > 0 {
					var labels []string
					for i, o := range it.Question.Options {
						labels = append(labels, fmt.Sprintf("%d. %s", i+1, o.Label))
					}
					q += " [" + strings.Join(labels, " | ") + "]"
				}
				detail("question:", q)
			}
		case store.QueueError:
			detail("error:", it.Error)
		case store.QueueDone:
			detail("result:", firstLine(it.Summary))
		case store.QueueWaiting:
			if it.Answer != "" {
				detail("answered:", it.Answer)
			}
		}
	}
	for _, it := range group(store.QueueActive) {
		row("▶", it)
	}
	for _, it := range group(store.QueueNeedsInput) {
		row("?", it)
	}
	for i, it := range group(store.QueueWaiting) {
		row(strconv.Itoa(i+1), it)
	}
	for _, it := range settled {
		row("-", it)
	}
	for _, it := range foreign {
		row("✗", it)
	}
	_ = tw.Flush()
	if hidden > 0 {
		fmt.Fprintf(out, "(%d older settled items not shown; --all lists them)\n", hidden)
	}
	if len(foreign) > 0 {
		fmt.Fprintf(out, "✗ foreign: %d item(s) were not queued by Guildhall for you (their integrity check failed); they never run. `guildhall queue rm ID` removes one.\n", len(foreign))
	}
}

func newQueueMoveCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "mv ID up|down|top|bottom|POSITION",
		Short: "Reorder a waiting item (POSITION counts waiting items from 1)",
		Args: args{min: 2, max: 2, what: "an item id and where to move it (up, down, top, bottom or a position)",
			example: "guildhall queue mv q-1767225600000-1 top", hint: "`guildhall queue ls` lists the items"}.validate,
		RunE: func(cmd *cobra.Command, args []string) error {
			id, where := args[0], args[1]
			return onItem(common, id, func(ctx context.Context, q *store.Queue) error {
				var err error
				switch where {
				case "up":
					_, err = q.MoveBy(ctx, id, -1)
				case "down":
					_, err = q.MoveBy(ctx, id, 1)
				case "top":
					_, err = q.MoveTo(ctx, id, 0)
				case "bottom":
					_, err = q.MoveTo(ctx, id, math.MaxInt32)
				default:
					n, cerr := strconv.Atoi(where)
					if cerr != nil || n < 1 {
						return usageErr(fmt.Errorf("move %s where? %q is not up, down, top, bottom or a position from 1", id, where))
					}
					_, err = q.MoveTo(ctx, id, n-1)
				}
				if err != nil {
					return queueErr(err)
				}
				pos, n := position(q, id)
				fmt.Fprintf(cmd.OutOrStdout(), "moved %s to position %d of %d\n", id, pos, n)
				return nil
			})
		},
	}
}

// itemCommand is a subcommand that applies one operation to one item, by
// its id, and reports where the item is now.
type itemCommand struct {
	use, short, long string
	aliases          []string
	what, example    string // the argument check's words
	verb             string // what the operation did, for the report
	op               itemOp
}

// itemOp is one operation on the queue item id.
type itemOp func(q *store.Queue, ctx context.Context, id string) (store.QueueItem, error)

func newQueueItemCmd(common *commonFlags, c itemCommand) *cobra.Command {
	return &cobra.Command{
		Use: c.use, Aliases: c.aliases, Short: c.short, Long: c.long,
		Args: args{min: 1, max: 1, what: c.what, example: c.example,
			hint: "`guildhall queue ls` lists the items"}.validate,
		RunE: func(cmd *cobra.Command, args []string) error {
			return queueItemOp(cmd, common, args[0], c.verb, c.op)
		},
	}
}

func newQueueCancelCmd(common *commonFlags) *cobra.Command {
	return newQueueItemCmd(common, itemCommand{
		use: "rm ID", aliases: []string{"cancel"},
		short: "Cancel a waiting or needs_input item (it stays listed as cancelled)",
		what:  "the id of the item to cancel", example: "guildhall queue rm q-1767225600000-1",
		verb: "cancelled", op: (*store.Queue).Cancel,
	})
}

func newQueueRequeueCmd(common *commonFlags) *cobra.Command {
	return newQueueItemCmd(common, itemCommand{
		use:   "requeue ID",
		short: "Put a done, error, cancelled or needs_input item back at the end of the queue (same id)",
		long: `Requeue returns an item to waiting at the end of the queue under the same id.
An item that has run continues from its latest run, so the new attempt sees
how the last one ended.`,
		what: "the id of the item to requeue", example: "guildhall queue requeue q-1767225600000-1",
		verb: "requeued", op: (*store.Queue).Requeue,
	})
}

func newQueueAnswerCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "answer ID ANSWER",
		Short: "Answer a needs_input item's question; it goes back to the head of the queue",
		Long: `Answer the question a parked item stopped on. ANSWER may be several words, or
the number of an offered option. The item returns to the head of the waiting
items; its next run continues from the parked one and its task carries
"Operator's answer to "QUESTION": ANSWER".`,
		Args: args{min: 2, max: -1, what: "an item id and the answer", example: `guildhall queue answer q-1767225600000-1 "Only fix the tests"`,
			hint: "`guildhall queue ls` lists the items"}.validate,
		RunE: func(cmd *cobra.Command, args []string) error {
			answer := strings.TrimSpace(strings.Join(args[1:], " "))
			return queueItemOp(cmd, common, args[0], "answered", func(q *store.Queue, ctx context.Context, id string) (store.QueueItem, error) {
				if it, err := q.Get(id); err == nil && it.Question != nil {
					if n, err := strconv.Atoi(answer); err == nil && n >= 1 && n <= len(it.Question.Options) {
						answer = it.Question.Options[n-1].Label
					}
				}
				return q.Answer(ctx, id, answer)
			})
		},
	}
}

// queueItemOp runs one item operation and reports where the item is now.
func queueItemOp(cmd *cobra.Command, common *commonFlags, id, verb string, op itemOp) error {
	return onItem(common, id, func(ctx context.Context, q *store.Queue) error {
		it, err := op(q, ctx, id)
		if err != nil {
			return queueErr(err)
		}
		out := cmd.OutOrStdout()
		if it.Status == store.QueueWaiting {
			pos, n := position(q, id)
			fmt.Fprintf(out, "%s %s: waiting, position %d of %d\n", verb, id, pos, n)
		} else {
			fmt.Fprintf(out, "%s %s: %s\n", verb, id, it.Status)
		}
		return nil
	})
}

// onItem checks an item id, then runs fn on the workspace's queue.
func onItem(common *commonFlags, id string, fn func(context.Context, *store.Queue) error) error {
	if err := checkItemID(id); err != nil {
		return err
	}
	return onQueue(common, fn)
}

// onQueue runs fn on the workspace's queue until it returns or the
// operator interrupts.
func onQueue(common *commonFlags, fn func(context.Context, *store.Queue) error) error {
	_, q, err := queueOf(common)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	return fn(ctx, q)
}

func newQueueResetCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "reset",
		Short: "Move a malformed queue.json aside (kept as queue.json.corrupt-TIME) and start an empty queue",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return onQueue(common, func(ctx context.Context, q *store.Queue) error {
				moved, err := q.Reset(ctx)
				if err != nil {
					if errors.Is(err, store.ErrInvalid) {
						return &exitCodeError{code: exitError, err: err}
					}
					return queueErr(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "moved the malformed queue to %s; the queue is now empty\n", moved)
				return nil
			})
		},
	}
}

func newQueueRunCmd(common *commonFlags) *cobra.Command {
	rf := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Process the queue headless until no task waits",
		Long: `Run the waiting tasks one at a time, printing each run as ` + "`guildhall run`" + ` does
(queue notices go to standard error). A run that asks a question before any
role that can change the workspace has started is parked: its item becomes
needs_input and the next task runs. Later questions are asked on this
terminal; with --no-input they get a "no operator available" tool error
instead, and nothing parks.

An item left active by a crash is recovered first: its run is resumed from
its checkpoint when it can be, and otherwise the item runs again.

Exit status: 0 every task done, 1 a task ended in error, 2 usage or
configuration error, 3 a task needs input, 130 interrupted.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signalContext()
			defer stop()
			s, err := common.loadHeadless(ctx)
			if err != nil {
				return err
			}
			return runQueue(ctx, cmd, rf, s)
		},
	}
	// run's flags, bound again: here --no-input also means nothing parks.
	cmd.Flags().BoolVar(&rf.json, "json", false, "print one log event per line (NDJSON) instead of readable lines")
	cmd.Flags().BoolVar(&rf.noInput, "no-input", false, "answer ask_human with a \"no operator available\" tool error instead of parking or asking")
	return cmd
}

func runQueue(ctx context.Context, cmd *cobra.Command, rf *runFlags, s *setup) error {
	errOut := cmd.ErrOrStderr()
	sess, end, err := openHeadless(errOut, rf, s)
	if err != nil {
		return &exitCodeError{code: exitError, err: fmt.Errorf("%w; a console there runs the queue when it is idle", err)}
	}
	defer end()

	var mu sync.Mutex
	outcomes := map[string]string{} // item id → its status after this invocation
	note := func(format string, a ...any) {
		if !rf.json {
			fmt.Fprintf(errOut, "queue: "+format+"\n", a...)
		}
	}
	sched := runner.NewScheduler(sess, runner.SchedulerOptions{
		OnDispatch: func(it store.QueueItem) {
			note("%s started as %s: %s", it.ID, it.RunID, clipRunes(render.SanitizeLine(firstLine(it.Task)), 80))
		},
		OnSettle: func(it store.QueueItem) {
			mu.Lock()
			outcomes[it.ID] = it.Status
			mu.Unlock()
			switch it.Status {
			case store.QueueNeedsInput:
				q := ""
				if it.Question != nil {
					q = it.Question.Text
				}
				note("%s needs input: %s — answer with `guildhall queue answer %s ANSWER`", it.ID, clipRunes(render.SanitizeLine(q), 100), it.ID)
			case store.QueueError:
				note("%s error: %s", it.ID, clipRunes(render.SanitizeLine(it.Error), 120))
			default:
				note("%s %s", it.ID, it.Status)
			}
		},
	})

	_, sub := sess.SubscribeLossless(256)
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		headless.Print(sub, cmd.OutOrStdout(), sess, headless.Options{JSON: rf.json, Interactive: !rf.noInput, In: cmd.InOrStdin(), Notices: cmd.ErrOrStderr()})
	}()
	drainErr := sched.Drain(ctx)
	sub.Close()
	<-printed

	if ctx.Err() != nil {
		return &exitCodeError{code: exitInterrupted, err: errors.New("stopped; a live run stays resumable and `guildhall queue run` picks it up again")}
	}
	var held *runner.EndpointError
	if errors.As(drainErr, &held) {
		// A setup problem, like run's: exit 2, the item waiting again.
		held.Unanswered.KeyNote = s.keyNoteFor(held.Unanswered)
		return usageErr(held)
	}
	if drainErr != nil {
		return queueErr(drainErr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(outcomes) == 0 {
		note("nothing waits in the queue")
		return nil
	}
	var errs, asks int
	for _, st := range outcomes {
		switch st {
		case store.QueueError:
			errs++
		case store.QueueNeedsInput:
			asks++
		}
	}
	switch {
	case errs > 0:
		return &exitCodeError{code: exitError, err: fmt.Errorf("%d queued task(s) ended in error; see `guildhall queue ls`", errs)}
	case asks > 0:
		return &exitCodeError{code: exitNeedsInput, err: fmt.Errorf("%d queued task(s) need input; see `guildhall queue ls`", asks)}
	}
	return nil
}
