package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// QueueLockFile serialises read-modify-write cycles of queue.json across
// processes (a CLI `queue add` while a console session runs).
const QueueLockFile = "queue.lock"

// Queue item statuses.
const (
	QueueWaiting    = "waiting"
	QueueActive     = "active"
	QueueNeedsInput = "needs_input"
	QueueDone       = "done"
	QueueError      = "error"
	QueueCancelled  = "cancelled"
)

// MaxSettledQueueItems bounds how many settled (done, error, cancelled)
// items queue.json keeps; the longest-settled items are dropped first.
// Waiting, active and needs_input items are never dropped.
const MaxSettledQueueItems = 200

// Queue errors. Each operation wraps one of them in a *QueueItemError that
// names the item and its status; clients map them with errors.Is:
// ErrNotFound → 404 not_found, ErrStatusForbidden → 409 status_forbidden,
// ErrInvalid → 400 invalid_body.
var (
	ErrNotFound        = errors.New("not_found")
	ErrStatusForbidden = errors.New("status_forbidden")
	ErrInvalid         = errors.New("invalid_body")
	// ErrQueueCorrupt is wrapped by *QueueCorruptError.
	ErrQueueCorrupt = errors.New("queue_corrupt")
	// ErrForeign refuses every change but removal to an item Guildhall did
	// not queue (its seal fails; see Sealer): it never runs.
	ErrForeign = errors.New("foreign")
)

// QueueItemError is an operation refused for one item.
type QueueItemError struct {
	Op     string // edit, move, cancel, requeue, answer, start, finish
	ID     string
	Status string // the item's status ("" when not found)
	Reason string // what the status allows, for the operator
	Err    error  // ErrNotFound or ErrStatusForbidden
}

func (e *QueueItemError) Error() string {
	if errors.Is(e.Err, ErrNotFound) {
		return fmt.Sprintf("queue item %s: not found", e.ID)
	}
	if errors.Is(e.Err, ErrForeign) {
		return fmt.Sprintf("cannot %s queue item %s: %s", e.Op, e.ID, foreignItemNote)
	}
	msg := fmt.Sprintf("cannot %s queue item %s: it is %s", e.Op, e.ID, e.Status)
	if e.Reason != "" {
		msg += "; " + e.Reason
	}
	return msg
}

func (e *QueueItemError) Unwrap() error { return e.Err }

// invalidError is bad input: it reads as its message alone, and wraps
// ErrInvalid for clients that map it to a code (the API's invalid_body), so
// the code never ends up in a message meant for a person.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() error { return ErrInvalid }

func invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

// QueueCorruptError reports a queue.json that does not parse or validate.
// The file is left exactly as it is: reads fail with this error and writes
// refuse to replace it until the operator repairs it or calls Reset.
type QueueCorruptError struct {
	Path    string
	Problem string
}

func (e *QueueCorruptError) Error() string {
	return fmt.Sprintf("%s is malformed (%s); it is kept untouched and the queue refuses changes until it is repaired or reset", e.Path, e.Problem)
}

func (e *QueueCorruptError) Unwrap() error { return ErrQueueCorrupt }

// QueueOption is one offered answer of a parked question.
type QueueOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// QueueQuestion is the ask_human question a parked run stopped on.
type QueueQuestion struct {
	ID      string        `json:"id,omitempty"`
	Text    string        `json:"text"`
	Context string        `json:"context,omitempty"`
	Options []QueueOption `json:"options,omitempty"`
}

// QueueAnswer is one answered question of an item; every answer rides into
// the item's later runs (see QueueItem.DispatchTask).
type QueueAnswer struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// QueueItem is one submitted task.
type QueueItem struct {
	ID            string `json:"id"`
	Task          string `json:"task"`
	Effort        string `json:"effort,omitempty"`
	LogLevel      string `json:"logLevel,omitempty"`
	ContinuesFrom string `json:"continuesFrom,omitempty"`
	Status        string `json:"status"`
	// RunID is the item's current (latest) run, set once dispatched; Runs
	// is every run dispatched for the item, oldest first.
	RunID     string     `json:"runId,omitempty"`
	Runs      []string   `json:"runs,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	StartedAt *time.Time `json:"startedAt,omitempty"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	// Question is the question a parked run stopped on (needs_input), kept
	// after it is answered; Answer is the latest answer and Answers all of
	// them.
	Question *QueueQuestion `json:"question,omitempty"`
	Answer   string         `json:"answer,omitempty"`
	Answers  []QueueAnswer  `json:"answers,omitempty"`
	// Summary is the result summary of the latest run; Error what went
	// wrong when the item is error.
	Summary string `json:"summary,omitempty"`
	Error   string `json:"error,omitempty"`

	// Foreign is set on reading an item whose seal fails: Guildhall did
	// not queue it for this operator, so it is never dispatched, and the
	// only change allowed is its removal. raw keeps its bytes, rewritten
	// as they were.
	Foreign bool `json:"foreign,omitempty"`
	raw     []byte
}

// foreignItemNote is what the operator is told about a foreign item.
const foreignItemNote = "it is foreign: it was not queued by Guildhall for you (its integrity check failed), so it will never run; remove it with `guildhall queue rm`"

// dispatchable reports whether the item waits to run: a waiting item that
// Guildhall queued.
func (it QueueItem) dispatchable() bool { return it.Status == QueueWaiting && !it.Foreign }

// Settled reports whether the item is done, error or cancelled.
func (it QueueItem) Settled() bool {
	switch it.Status {
	case QueueDone, QueueError, QueueCancelled:
		return true
	}
	return false
}

// DispatchTask is the task text the item's next run is given: the task,
// then one line per operator answer:
//
//	Operator's answer to "QUESTION": ANSWER
func (it QueueItem) DispatchTask() string {
	if len(it.Answers) == 0 {
		return it.Task
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(it.Task, "\n"))
	b.WriteString("\n")
	for _, a := range it.Answers {
		fmt.Fprintf(&b, "\nOperator's answer to %q: %s", a.Question, a.Answer)
	}
	return b.String()
}

// QueueSpec is a task to add.
type QueueSpec struct {
	Task          string `json:"task"`
	Effort        string `json:"effort,omitempty"`
	LogLevel      string `json:"logLevel,omitempty"`
	ContinuesFrom string `json:"continuesFrom,omitempty"`
}

// QueueEdit changes a waiting item; nil fields are left alone. An empty
// Effort clears the override (the project default applies at dispatch).
type QueueEdit struct {
	Task   *string `json:"task,omitempty"`
	Effort *string `json:"effort,omitempty"`
}

// QueueOutcome is how an item's run ended, for Finish.
type QueueOutcome struct {
	RunID string
	// RunStatus is the run's status: success → done,
	// needs_clarification → needs_input, anything else → error.
	RunStatus string
	Summary   string
	Error     string
	// Question is the parked question; for a needs_clarification run
	// without one, the summary stands as the question.
	Question *QueueQuestion
}

type queueFile struct {
	Items []QueueItem `json:"items"`
}

var queueIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^q-[0-9]{1,20}-[0-9]{1,9}$`) })

// ValidQueueID reports whether id has the queue item id form q-<ms>-<n>.
func ValidQueueID(id string) bool { return queueIDPattern().MatchString(id) }

// CheckEffort validates an effort tier; "" (use the project default) is
// allowed.
func CheckEffort(e string) error {
	switch e {
	case "", "quick", "standard", "thorough":
		return nil
	}
	return invalidf("effort %q is not one of quick, standard, thorough", e)
}

// CheckLogLevel validates a log level; "" (use the project default) is
// allowed.
func CheckLogLevel(l string) error {
	switch l {
	case "", "full", "standard":
		return nil
	}
	return invalidf("log level %q is not one of full, standard", l)
}

// Queue is the project's task queue, .orchestration/queue.json. Every
// change is a read-modify-write cycle under an flock on
// .orchestration/queue.lock and ends in an atomic replace, so concurrent
// processes never lose or duplicate an item and a crash leaves the
// previous complete file. A Queue is safe for concurrent use.
type Queue struct {
	ws  Workspace
	now func() time.Time
}

// Queue returns the workspace's queue.
func (w Workspace) Queue() *Queue { return &Queue{ws: w, now: time.Now} }

// WithClock returns a copy of q that reads time from now (tests pin it).
func (q *Queue) WithClock(now func() time.Time) *Queue {
	c := *q
	c.now = now
	return &c
}

// Path is the queue file's path.
func (q *Queue) Path() string { return filepath.Join(q.ws.Orchestration(), QueueFile) }

// List returns every item in queue order: waiting items run in the order
// they appear.
func (q *Queue) List() ([]QueueItem, error) {
	f, err := q.read()
	if err != nil {
		return nil, err
	}
	return f.Items, nil
}

// Waiting returns the waiting items in dispatch order; foreign items are
// never among them.
func (q *Queue) Waiting() ([]QueueItem, error) {
	items, err := q.List()
	if err != nil {
		return nil, err
	}
	var out []QueueItem
	for _, it := range items {
		if it.dispatchable() {
			out = append(out, it)
		}
	}
	return out, nil
}

// Get returns one item.
func (q *Queue) Get(id string) (QueueItem, error) {
	f, err := q.read()
	if err != nil {
		return QueueItem{}, err
	}
	i := f.index(id)
	if i < 0 {
		return QueueItem{}, &QueueItemError{Op: "get", ID: id, Err: ErrNotFound}
	}
	return f.Items[i], nil
}

// Add appends a waiting item at the tail and returns it.
func (q *Queue) Add(ctx context.Context, spec QueueSpec) (QueueItem, error) {
	if strings.TrimSpace(spec.Task) == "" {
		return QueueItem{}, invalidf("the task is empty; say what the run should do")
	}
	if err := CheckEffort(spec.Effort); err != nil {
		return QueueItem{}, err
	}
	if err := CheckLogLevel(spec.LogLevel); err != nil {
		return QueueItem{}, err
	}
	if spec.ContinuesFrom != "" && !ValidRunID(spec.ContinuesFrom) {
		return QueueItem{}, invalidf("continue from %q: not a run id of the form run-YYYYMMDD-HHMMSS", spec.ContinuesFrom)
	}
	var added QueueItem
	err := q.update(ctx, func(f *queueFile, now time.Time) error {
		added = QueueItem{
			ID: f.newID(now), Task: spec.Task, Effort: spec.Effort, LogLevel: spec.LogLevel,
			ContinuesFrom: spec.ContinuesFrom, Status: QueueWaiting, CreatedAt: now, UpdatedAt: now,
		}
		f.Items = append(f.Items, added)
		return nil
	})
	return added, err
}

// Edit changes the task or effort of a waiting item.
func (q *Queue) Edit(ctx context.Context, id string, e QueueEdit) (QueueItem, error) {
	if e.Task != nil && strings.TrimSpace(*e.Task) == "" {
		return QueueItem{}, invalidf("the task is empty; say what the run should do")
	}
	if e.Effort != nil {
		if err := CheckEffort(*e.Effort); err != nil {
			return QueueItem{}, err
		}
	}
	return q.change(ctx, "edit", id, []string{QueueWaiting}, "only a waiting item can be edited",
		func(f *queueFile, i int, now time.Time) error {
			it := &f.Items[i]
			if e.Task != nil {
				it.Task = *e.Task
			}
			if e.Effort != nil {
				it.Effort = *e.Effort
			}
			return nil
		})
}

// MoveTo moves a waiting item to position pos (0-based) among the waiting
// items; out-of-range positions are clamped.
func (q *Queue) MoveTo(ctx context.Context, id string, pos int) (QueueItem, error) {
	return q.change(ctx, "move", id, []string{QueueWaiting}, "only a waiting item can be reordered",
		func(f *queueFile, i int, now time.Time) error {
			f.moveWaiting(i, pos)
			return nil
		})
}

// MoveBy moves a waiting item delta places among the waiting items
// (negative is towards the head), clamped.
func (q *Queue) MoveBy(ctx context.Context, id string, delta int) (QueueItem, error) {
	return q.change(ctx, "move", id, []string{QueueWaiting}, "only a waiting item can be reordered",
		func(f *queueFile, i int, now time.Time) error {
			f.moveWaiting(i, f.waitingPos(i)+delta)
			return nil
		})
}

// Cancel marks a waiting or needs_input item cancelled. An active item's
// run is stopped through the session (terminate), not here.
//
// A foreign item (see QueueItem.Foreign) is removed from the queue instead:
// marking it cancelled would mean sealing it, and a sealed item could be
// requeued.
func (q *Queue) Cancel(ctx context.Context, id string) (QueueItem, error) {
	var removed QueueItem
	err := q.update(ctx, func(f *queueFile, now time.Time) error {
		if i := f.index(id); i >= 0 && f.Items[i].Foreign {
			removed = f.Items[i]
			f.Items = slices.Delete(f.Items, i, i+1)
		}
		return nil
	})
	if err != nil || removed.ID != "" {
		return removed, err
	}
	return q.change(ctx, "cancel", id, []string{QueueWaiting, QueueNeedsInput},
		"only a waiting or needs_input item can be cancelled (terminate an active item's run instead)",
		func(f *queueFile, i int, now time.Time) error {
			it := &f.Items[i]
			it.Status = QueueCancelled
			it.EndedAt = &now
			return nil
		})
}

// Requeue returns a done, error, cancelled or needs_input item to waiting
// at the tail, under the same id (clients keep their handle; Runs keeps
// the earlier attempts). An item that has run continues from its latest
// run, so the retry sees how the last attempt ended.
func (q *Queue) Requeue(ctx context.Context, id string) (QueueItem, error) {
	return q.change(ctx, "requeue", id, []string{QueueDone, QueueError, QueueCancelled, QueueNeedsInput},
		"only a done, error, cancelled or needs_input item can be requeued",
		func(f *queueFile, i int, now time.Time) error {
			it := f.Items[i]
			if it.RunID != "" {
				it.ContinuesFrom = it.RunID
			}
			it.Status = QueueWaiting
			it.resetRound()
			f.Items = append(slices.Delete(f.Items, i, i+1), it)
			return nil
		})
}

// Answer records the operator's answer to a needs_input item's question
// and returns it to the head of the waiting items; its next run continues
// from the parked run and its task carries the answer.
func (q *Queue) Answer(ctx context.Context, id, answer string) (QueueItem, error) {
	if strings.TrimSpace(answer) == "" {
		return QueueItem{}, invalidf("the answer is empty")
	}
	return q.change(ctx, "answer", id, []string{QueueNeedsInput}, "only a needs_input item can be answered",
		func(f *queueFile, i int, now time.Time) error {
			it := f.Items[i]
			question := it.Summary
			if it.Question != nil {
				question = it.Question.Text
			}
			it.Answer = answer
			it.Answers = append(it.Answers, QueueAnswer{Question: question, Answer: answer})
			it.Status = QueueWaiting
			it.resetRound()
			f.Items = slices.Delete(f.Items, i, i+1)
			f.Items = slices.Insert(f.Items, f.firstWaiting(), it)
			return nil
		})
}

// ClaimNext marks the head waiting item active, before its run starts, and
// returns it; ok is false when nothing waits. The claimed item has no run
// id until MarkActive records one, so a crash between the two is visible.
func (q *Queue) ClaimNext(ctx context.Context) (item QueueItem, ok bool, err error) {
	// A cheap unlocked look first: the scheduler polls.
	if w, err := q.Waiting(); err != nil || len(w) == 0 {
		return QueueItem{}, false, err
	}
	err = q.update(ctx, func(f *queueFile, now time.Time) error {
		i := f.firstWaiting()
		if i >= len(f.Items) || !f.Items[i].dispatchable() {
			return nil
		}
		it := &f.Items[i]
		it.Status, it.RunID, it.StartedAt, it.EndedAt = QueueActive, "", &now, nil
		item, ok = *it, true
		return nil
	})
	return item, ok, err
}

// MarkActive records the run an active item was dispatched as.
func (q *Queue) MarkActive(ctx context.Context, id, runID string) (QueueItem, error) {
	if !ValidRunID(runID) {
		return QueueItem{}, invalidf("mark %s active: run id %q is not valid", id, runID)
	}
	return q.change(ctx, "start", id, []string{QueueActive}, "only an active item gets a run",
		func(f *queueFile, i int, now time.Time) error {
			it := &f.Items[i]
			if it.RunID == runID {
				return nil
			}
			if it.RunID != "" {
				return &QueueItemError{Op: "start", ID: id, Status: it.Status, Err: ErrStatusForbidden,
					Reason: "it is already running as " + it.RunID}
			}
			it.RunID = runID
			it.Runs = append(it.Runs, runID)
			return nil
		})
}

// Unclaim returns an active item to the head of the waiting items: its run
// never started (the workspace was busy), or the process running it died
// and the run cannot resume.
func (q *Queue) Unclaim(ctx context.Context, id string) (QueueItem, error) {
	return q.change(ctx, "unclaim", id, []string{QueueActive}, "only an active item can return to waiting",
		func(f *queueFile, i int, now time.Time) error {
			it := f.Items[i]
			it.Status, it.RunID = QueueWaiting, ""
			it.resetRound()
			f.Items = slices.Delete(f.Items, i, i+1)
			f.Items = slices.Insert(f.Items, f.firstWaiting(), it)
			return nil
		})
}

// Finish settles an active item from its run's outcome: success → done,
// needs_clarification → needs_input with the question (continuing from
// the parked run once answered), anything else → error.
func (q *Queue) Finish(ctx context.Context, id string, o QueueOutcome) (QueueItem, error) {
	return q.change(ctx, "finish", id, []string{QueueActive}, "only an active item can be finished",
		func(f *queueFile, i int, now time.Time) error {
			it := &f.Items[i]
			if o.RunID != "" && it.RunID != "" && it.RunID != o.RunID {
				return &QueueItemError{Op: "finish", ID: id, Status: it.Status, Err: ErrStatusForbidden,
					Reason: fmt.Sprintf("its run is %s, not %s", it.RunID, o.RunID)}
			}
			if o.RunID != "" && it.RunID == "" {
				it.RunID = o.RunID
				it.Runs = append(it.Runs, o.RunID)
			}
			it.EndedAt = &now
			it.Summary, it.Error = o.Summary, ""
			switch o.RunStatus {
			case StatusSuccess:
				it.Status = QueueDone
			case StatusNeedsClarification:
				it.Status = QueueNeedsInput
				it.Question = o.Question
				if it.Question == nil {
					it.Question = &QueueQuestion{Text: o.Summary}
				}
				if it.RunID != "" {
					it.ContinuesFrom = it.RunID
				}
				it.Answer = ""
			default:
				it.Status = QueueError
				it.Error = o.Error
				if it.Error == "" {
					it.Error = o.Summary
				}
				if it.Error == "" {
					it.Error = "the run ended " + o.RunStatus
				}
			}
			return nil
		})
}

// Reset moves a malformed queue.json aside as queue.json.corrupt-<UTC
// time> and returns the new name; the queue starts empty. A well-formed
// queue is never reset.
func (q *Queue) Reset(ctx context.Context) (string, error) {
	unlock, err := q.lock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	_, err = q.read()
	var ce *QueueCorruptError
	if !errors.As(err, &ce) {
		if err != nil {
			return "", err
		}
		return "", invalidf("%s is well formed; there is nothing to reset", q.Path())
	}
	dst := QueueFile + ".corrupt-" + q.now().UTC().Format("20060102-150405.000")
	d, err := openRecordsDir(q.ws.Orchestration(), false)
	if err != nil {
		return "", err
	}
	defer d.close()
	if err := d.rename(QueueFile, dst); err != nil {
		return "", fmt.Errorf("move %s aside: %w", q.Path(), err)
	}
	if err := d.sync(); err != nil {
		return "", err
	}
	return d.join(dst), nil
}

// change applies fn to item id when its status is one of allowed.
func (q *Queue) change(ctx context.Context, op, id string, allowed []string, reason string, fn func(f *queueFile, i int, now time.Time) error) (QueueItem, error) {
	var out QueueItem
	err := q.update(ctx, func(f *queueFile, now time.Time) error {
		i := f.index(id)
		if i < 0 {
			return &QueueItemError{Op: op, ID: id, Err: ErrNotFound}
		}
		if f.Items[i].Foreign {
			return &QueueItemError{Op: op, ID: id, Status: f.Items[i].Status, Err: ErrForeign}
		}
		if !slices.Contains(allowed, f.Items[i].Status) {
			return &QueueItemError{Op: op, ID: id, Status: f.Items[i].Status, Reason: reason, Err: ErrStatusForbidden}
		}
		if err := fn(f, i, now); err != nil {
			return err
		}
		// fn may have moved the item.
		j := f.index(id)
		f.Items[j].UpdatedAt = now
		out = f.Items[j]
		return nil
	})
	return out, err
}

// update runs one locked read-modify-write cycle.
func (q *Queue) update(ctx context.Context, fn func(f *queueFile, now time.Time) error) error {
	unlock, err := q.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := q.read()
	if err != nil {
		return err
	}
	if err := fn(f, q.now().UTC()); err != nil {
		return err
	}
	f.prune()
	b, err := f.encode(q.ws.Seal)
	if err != nil {
		return fmt.Errorf("encode %s: %w", q.Path(), err)
	}
	return WriteFileAtomic(q.Path(), b, 0o644)
}

// encode writes the queue file: each of Guildhall's items sealed, each
// foreign item as the bytes it was read as, one item a line.
func (f *queueFile) encode(seal *Sealer) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"items": [`)
	for i, it := range f.Items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  ")
		if it.Foreign {
			b.Write(it.raw)
			continue
		}
		item, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		b.Write(seal.Seal(SealQueueItem, it.ID, item))
	}
	if len(f.Items) > 0 {
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	return b.Bytes(), nil
}

// decodeQueue parses queue.json, checking each item's seal.
func decodeQueue(b []byte, seal *Sealer) (*queueFile, error) {
	var raw struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	f := &queueFile{Items: make([]QueueItem, 0, len(raw.Items))}
	for n, r := range raw.Items {
		var it QueueItem
		if err := json.Unmarshal(r, &it); err != nil {
			return nil, fmt.Errorf("item %d: %w", n+1, err)
		}
		it.Foreign = !seal.Check(SealQueueItem, it.ID, r)
		if it.Foreign {
			it.raw = append([]byte(nil), r...)
		}
		f.Items = append(f.Items, it)
	}
	return f, nil
}

// lock takes the queue flock, waiting for other holders; ctx bounds the
// wait. The lock is per open file description, so every call opens the
// file afresh and goroutines of one process exclude each other too.
func (q *Queue) lock(ctx context.Context) (func(), error) {
	if err := q.ws.EnsureRecords(false); err != nil {
		return nil, err
	}
	path := filepath.Join(q.ws.Orchestration(), QueueLockFile)
	fh, err := openRecord(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open queue lock: %w", err)
	}
	delay := time.Millisecond
	for {
		err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(fh.Fd()), syscall.LOCK_UN)
				_ = fh.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			fh.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			fh.Close()
			return nil, fmt.Errorf("wait for the queue lock: %w", ctx.Err())
		case <-t.C:
		}
		if delay < 32*time.Millisecond {
			delay *= 2
		}
	}
}

// read loads and validates queue.json. A missing or blank file is an empty
// queue; anything else that does not validate is a *QueueCorruptError.
func (q *Queue) read() (*queueFile, error) {
	path := q.Path()
	b, err := ReadRecord(path, MaxQueueBytes)
	if errors.Is(err, os.ErrNotExist) {
		return &queueFile{}, nil
	}
	var re *RecordError
	if errors.As(err, &re) && !re.Folder {
		// Kept as it is, like a malformed one: Reset moves it aside.
		return nil, &QueueCorruptError{Path: path, Problem: "it " + re.Problem + ", not a file Guildhall wrote"}
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return &queueFile{}, nil
	}
	f, err := decodeQueue(b, q.ws.Seal)
	if err != nil {
		return nil, &QueueCorruptError{Path: path, Problem: err.Error()}
	}
	if problem := f.validate(); problem != "" {
		return nil, &QueueCorruptError{Path: path, Problem: problem}
	}
	return f, nil
}

func (f *queueFile) validate() string {
	seen := map[string]bool{}
	for n, it := range f.Items {
		switch {
		case !ValidQueueID(it.ID):
			return fmt.Sprintf("item %d: id %q is not of the form q-<ms>-<n>", n+1, it.ID)
		case seen[it.ID]:
			return fmt.Sprintf("item %d: id %s appears twice", n+1, it.ID)
		case strings.TrimSpace(it.Task) == "":
			return fmt.Sprintf("item %s: the task is empty", it.ID)
		case it.RunID != "" && !ValidRunID(it.RunID):
			return fmt.Sprintf("item %s: run id %q is not valid", it.ID, it.RunID)
		case it.ContinuesFrom != "" && !ValidRunID(it.ContinuesFrom):
			return fmt.Sprintf("item %s: continuesFrom %q is not a valid run id", it.ID, it.ContinuesFrom)
		}
		switch it.Status {
		case QueueWaiting, QueueActive, QueueNeedsInput, QueueDone, QueueError, QueueCancelled:
		default:
			return fmt.Sprintf("item %s: unknown status %q", it.ID, it.Status)
		}
		seen[it.ID] = true
	}
	return ""
}

func (f *queueFile) index(id string) int {
	for i := range f.Items {
		if f.Items[i].ID == id {
			return i
		}
	}
	return -1
}

// newID is q-<unix ms>-<n>, n the first free counter for that millisecond.
func (f *queueFile) newID(now time.Time) string {
	for n := 1; ; n++ {
		id := fmt.Sprintf("q-%d-%d", now.UnixMilli(), n)
		if f.index(id) < 0 {
			return id
		}
	}
}

// firstWaiting is the slice index of the first waiting item (len when none).
func (f *queueFile) firstWaiting() int {
	for i, it := range f.Items {
		if it.dispatchable() {
			return i
		}
	}
	return len(f.Items)
}

// waitingPos is the position of slice index i among the waiting items.
func (f *queueFile) waitingPos(i int) int {
	pos := 0
	for j := 0; j < i; j++ {
		if f.Items[j].dispatchable() {
			pos++
		}
	}
	return pos
}

// moveWaiting moves the waiting item at slice index i to position pos
// among the waiting items, clamped.
func (f *queueFile) moveWaiting(i, pos int) {
	it := f.Items[i]
	f.Items = slices.Delete(f.Items, i, i+1)
	var waiting []int
	for j, x := range f.Items {
		if x.dispatchable() {
			waiting = append(waiting, j)
		}
	}
	pos = max(0, min(pos, len(waiting)))
	at := len(f.Items)
	switch {
	case pos < len(waiting):
		at = waiting[pos]
	case len(waiting) > 0:
		at = waiting[len(waiting)-1] + 1
	}
	f.Items = slices.Insert(f.Items, at, it)
}

// prune drops the longest-settled items beyond MaxSettledQueueItems.
func (f *queueFile) prune() {
	var settled []int
	for i, it := range f.Items {
		if it.Settled() {
			settled = append(settled, i)
		}
	}
	drop := len(settled) - MaxSettledQueueItems
	if drop <= 0 {
		return
	}
	slices.SortStableFunc(settled, func(a, b int) int { return f.Items[a].UpdatedAt.Compare(f.Items[b].UpdatedAt) })
	gone := map[string]bool{}
	for _, i := range settled[:drop] {
		gone[f.Items[i].ID] = true
	}
	f.Items = slices.DeleteFunc(f.Items, func(it QueueItem) bool { return gone[it.ID] })
}

// resetRound clears what described the previous dispatch.
func (it *QueueItem) resetRound() {
	it.RunID, it.StartedAt, it.EndedAt, it.Summary, it.Error = "", nil, nil, "", ""
}
