package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Record is one log.jsonl line: {timestamp, type, payload}. The store keeps
// it opaque; the runner's event package gives it meaning.
type Record = json.RawMessage

// LogWriter appends lines to a run's log.jsonl. It is append-only: it opens
// the file with O_APPEND and never seeks or truncates.
type LogWriter struct {
	mu    sync.Mutex
	f     *os.File
	lines int64
	dirty bool
}

// OpenLog opens (creating if needed) the log at path for appending. It counts
// the complete lines already present so sequence numbers continue; a torn
// last line (a crash mid-write) is terminated with a newline first so the
// next record starts on its own line.
func OpenLog(path string) (*LogWriter, error) {
	f, err := openRecord(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", path, err)
	}
	n, torn, err := countLines(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read log %s: %w", path, err)
	}
	w := &LogWriter{f: f, lines: n}
	if torn {
		if _, err := f.Write([]byte("\n")); err != nil {
			f.Close()
			return nil, fmt.Errorf("repair log %s: %w", path, err)
		}
		w.lines++
	}
	return w, nil
}

// countLines counts the lines of f from its start. A line longer than
// MaxLogLine is not one Guildhall wrote: counting stops there with a
// *LongLineError, so a file of gigabytes without a newline is not read
// whole.
func countLines(f *os.File) (n int64, torn bool, err error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, false, err
	}
	buf := make([]byte, 64*1024)
	var last byte = '\n'
	var run int64 // bytes of the line in progress
	for {
		k, err := f.Read(buf)
		chunk := buf[:k]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				run += int64(len(chunk))
				break
			}
			n++
			run = 0
			chunk = chunk[i+1:]
		}
		if run > MaxLogLine {
			return n, false, &LongLineError{Line: n}
		}
		if k > 0 {
			last = buf[k-1]
		}
		if err == io.EOF {
			return n, last != '\n', nil
		}
		if err != nil {
			return n, false, err
		}
	}
}

// Append writes one record as a line and returns its 0-based line number.
// The record must not contain a newline (compact JSON never does).
func (w *LogWriter) Append(rec []byte) (int64, error) {
	if bytes.IndexByte(rec, '\n') >= 0 {
		return 0, errors.New("log record contains a newline")
	}
	line := make([]byte, 0, len(rec)+1)
	line = append(append(line, rec...), '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.Write(line); err != nil {
		return 0, fmt.Errorf("append log: %w", err)
	}
	seq := w.lines
	w.lines++
	w.dirty = true
	return seq, nil
}

// Sync flushes appended lines to stable storage. The runner calls it at
// every turn boundary, so a kill -9 loses no completed turn.
func (w *LogWriter) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.dirty {
		return nil
	}
	w.dirty = false
	return w.f.Sync()
}

// Lines is the number of lines written so far.
func (w *LogWriter) Lines() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lines
}

// Close syncs and closes the log.
func (w *LogWriter) Close() error {
	if err := w.Sync(); err != nil {
		w.f.Close()
		return err
	}
	return w.f.Close()
}

// LogProblem describes a line of a log that could not be parsed.
type LogProblem struct {
	Line int64 // 0-based
	Torn bool  // the final line had no newline: a write cut short
	Err  error
}

func (p LogProblem) Error() string {
	if p.Torn {
		return fmt.Sprintf("log line %d is torn (cut short by a crash): %v", p.Line+1, p.Err)
	}
	return fmt.Sprintf("log line %d is not valid JSON: %v", p.Line+1, p.Err)
}

// ReadLog calls fn for every well-formed line of the log at path, with its
// 0-based line number. Lines that do not parse as JSON objects are skipped
// and reported in the returned problems; they never stop the read. The log
// is opened as every record is (OpenRecord): a link, FIFO or device in its
// place is a *RecordError, never read.
func ReadLog(path string, fn func(seq int64, rec []byte) error) ([]LogProblem, error) {
	f, err := OpenRecord(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	problems, err := ScanLog(f, fn)
	var long *LongLineError
	if errors.As(err, &long) {
		return problems, &RecordError{Path: path, Problem: long.clause()}
	}
	return problems, err
}

// LongLineError ends a read at a log line longer than MaxLogLine: no line
// Guildhall writes is that long, so the log is not one it wrote.
type LongLineError struct{ Line int64 } // 0-based

func (e *LongLineError) clause() string {
	return fmt.Sprintf("has a line (%d) longer than the %s a log line may be", e.Line+1, byteSize(MaxLogLine))
}

func (e *LongLineError) Error() string {
	return "the log " + e.clause() + ": it was not written by Guildhall"
}

// ScanLog is ReadLog over any reader. A line longer than MaxLogLine ends
// the read with a *LongLineError: it was not written by Guildhall, and
// holding it would take memory without bound.
func ScanLog(r io.Reader, fn func(seq int64, rec []byte) error) ([]LogProblem, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	var problems []LogProblem
	for seq := int64(0); ; seq++ {
		line, err := readLine(br)
		if errors.Is(err, errLongLine) {
			return problems, &LongLineError{Line: seq}
		}
		if len(line) == 0 && err == io.EOF {
			return problems, nil
		}
		if err != nil && err != io.EOF {
			return problems, err
		}
		torn := err == io.EOF // no trailing newline
		body := bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(body)) == 0 {
			if torn {
				return problems, nil
			}
			continue
		}
		if !validJSON(body) || body[0] != '{' {
			problems = append(problems, LogProblem{Line: seq, Torn: torn, Err: errors.New("malformed JSON")})
		} else if ferr := fn(seq, body); ferr != nil {
			return problems, ferr
		}
		if torn {
			return problems, nil
		}
	}
}

// errLongLine stops readLine at MaxLogLine.
var errLongLine = errors.New("log line too long")

// readLine returns the next line of br, with its newline, in a slice of
// its own (callers keep records), or errLongLine past MaxLogLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > MaxLogLine {
			return nil, errLongLine
		}
		buf = append(buf, frag...)
		if err != bufio.ErrBufferFull {
			return buf, err
		}
	}
}

// CountLogLines counts the lines of the log at path, so a reader can size
// what it builds from the log before reading it.
func CountLogLines(path string) (int64, error) {
	f, err := OpenRecord(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, torn, err := countLines(f)
	var long *LongLineError
	if errors.As(err, &long) {
		return n, &RecordError{Path: path, Problem: long.clause()}
	}
	if torn {
		n++
	}
	return n, err
}
