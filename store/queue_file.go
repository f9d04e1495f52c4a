package store

// queue.json on disk: the locked read-modify-write cycle, its sealed
// encoding and validation, and the ordering of waiting items.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

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
