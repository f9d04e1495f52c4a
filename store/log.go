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

func countLines(f *os.File) (n int64, torn bool, err error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, false, err
	}
	buf := make([]byte, 64*1024)
	var last byte = '\n'
	for {
		k, err := f.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
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
// and reported in the returned problems; they never stop the read.
func ReadLog(path string, fn func(seq int64, rec []byte) error) ([]LogProblem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ScanLog(f, fn)
}

// ScanLog is ReadLog over any reader.
func ScanLog(r io.Reader, fn func(seq int64, rec []byte) error) ([]LogProblem, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	var problems []LogProblem
	for seq := int64(0); ; seq++ {
		line, err := br.ReadBytes('\n')
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

// CountLogLines counts the lines of the log at path, so a reader can size
// what it builds from the log before reading it.
func CountLogLines(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, torn, err := countLines(f)
	if torn {
		n++
	}
	return n, err
}
