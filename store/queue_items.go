package store

// The queue's vocabulary: items, their statuses, questions and answers,
// the changes clients ask for, and the errors operations return.

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
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
