package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// editFileMaxBytes caps the size of a file edit_file will rewrite.
const editFileMaxBytes = 4 << 20

// editFile is edit_file {path, old_string, new_string}: replace exactly one
// occurrence of old_string.
type editFile struct{}

func (editFile) Manifest() Manifest { return manifestOf("edit_file") }

func (editFile) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Path      string `json:"path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	if a.OldString == "" {
		return Fail(KindInvalidArguments, "old_string is empty; use write_file to create a file")
	}
	rel, err := env.Workspace.ResolveWrite(a.Path)
	if err != nil {
		return pathFail(a.Path, err)
	}
	data, size, truncated, err := env.Workspace.readCapped(a.Path, rel, editFileMaxBytes)
	if err != nil {
		return pathFail(a.Path, err)
	}
	if truncated {
		return Fail(KindInvalidArguments, fmt.Sprintf("%s: file is %d bytes; edit_file handles files up to %d bytes", showPath(a.Path), size, editFileMaxBytes))
	}
	text := string(data)
	switch n := strings.Count(text, a.OldString); n {
	case 1:
	case 0:
		return Result{Kind: KindInvalidArguments, Details: map[string]any{"matches": 0},
			Message: fmt.Sprintf("%s: old_string was not found (0 matches); read the file and copy the text exactly", showPath(a.Path))}
	default:
		return Result{Kind: KindInvalidArguments, Details: map[string]any{"matches": n},
			Message: fmt.Sprintf("%s: old_string matches %d places; include more surrounding text so it matches exactly one", showPath(a.Path), n)}
	}
	out := strings.Replace(text, a.OldString, a.NewString, 1)
	env.keepPrior("edit_file", rel)
	if err := env.Workspace.writeAtomic(a.Path, rel, []byte(out)); err != nil {
		return pathFail(a.Path, err)
	}
	env.wrote(rel, []byte(out))
	return OK(map[string]any{"path": a.Path, "replacements": 1, "bytes": len(out)})
}
