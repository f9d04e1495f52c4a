package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/guildhall/guildhall/internal/runetext"
)

// readFileMaxBytes caps what read_file reads of one file.
const readFileMaxBytes = 256 << 10

// readFile is read_file {path}: a whole text file, up to 256 KiB.
type readFile struct{}

func (readFile) Manifest() Manifest { return manifestOf("read_file") }

func (readFile) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Path string `json:"path"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	rel, err := env.Workspace.Resolve(a.Path)
	if err != nil {
		return pathFail(a.Path, err)
	}
	data, size, truncated, err := env.Workspace.readCapped(a.Path, rel, readFileMaxBytes)
	if err != nil {
		return pathFail(a.Path, err)
	}
	if looksBinary(data) {
		return OK(map[string]any{"path": a.Path, "binary": true, "size": size,
			"content": fmt.Sprintf("[binary file, %d bytes, not shown]", size)})
	}
	content := runetext.Decode(data)
	if truncated {
		content += fmt.Sprintf("\n[… truncated: file is %d bytes, only the first %d were read; use read_file_partial for the rest]", size, readFileMaxBytes)
	}
	return OK(map[string]any{"path": a.Path, "content": content, "size": size, "truncated": truncated})
}
