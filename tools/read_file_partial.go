package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/guildhall/guildhall/internal/runetext"
)

// read_file_partial limits: lines per call, characters per line, and
// characters per result.
const (
	partialMaxLines     = 2000
	partialMaxLineChars = 2000
	partialMaxChars     = 100_000
)

// readFilePartial is read_file_partial {path, offset, limit}: a slice of
// lines, zero-based offset, with the file's total line count.
type readFilePartial struct{}

func (readFilePartial) Manifest() Manifest { return manifestOf("read_file_partial") }

func (readFilePartial) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Path   string   `json:"path"`
		Offset *float64 `json:"offset"`
		Limit  *float64 `json:"limit"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	offset, r := intArg(a.Offset, 0, 0, 1<<40, "offset")
	if r != nil {
		return *r
	}
	limit, r := intArg(a.Limit, 200, 1, partialMaxLines, "limit")
	if r != nil {
		return *r
	}
	rel, err := env.Workspace.Resolve(a.Path)
	if err != nil {
		return pathFail(a.Path, err)
	}
	f, _, err := env.Workspace.openRegular(a.Path, rel)
	if err != nil {
		return pathFail(a.Path, err)
	}
	defer f.Close()

	br := bufio.NewReaderSize(f, 64<<10)
	var out []string
	chars, total := 0, 0
	truncated, binary := false, false
	for ; ; total++ {
		if total%4096 == 0 && ctx.Err() != nil {
			return Fail(KindError, "cancelled")
		}
		line, long, err := readLine(br, partialMaxLineChars*4)
		if err == io.EOF {
			break
		}
		if err != nil {
			return pathFail(a.Path, err)
		}
		if total < offset || len(out) >= limit || truncated {
			continue
		}
		if looksBinary(line) {
			binary = true
		}
		text := runetext.Decode(line)
		if t, cut := runetext.Cut(text, partialMaxLineChars); cut || long {
			text = t + " [… line truncated]"
		}
		if chars+len(text) > partialMaxChars {
			truncated = true
			continue
		}
		chars += len(text) + 1
		out = append(out, text)
	}
	if binary {
		return OK(map[string]any{"path": a.Path, "binary": true, "totalLines": total,
			"content": "[binary file, not shown]"})
	}
	return OK(map[string]any{
		"path": a.Path, "offset": offset, "returnedLines": len(out), "totalLines": total,
		"content": strings.Join(out, "\n"), "truncated": truncated,
	})
}
