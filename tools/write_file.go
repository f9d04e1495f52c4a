package tools

import (
	"context"
	"encoding/json"
)

// writeFile is write_file {path, content}: create or atomically replace a
// file, creating missing parent directories inside the workspace.
type writeFile struct{}

func (writeFile) Manifest() Manifest { return manifestOf("write_file") }

func (writeFile) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	rel, err := env.Workspace.ResolveWrite(a.Path)
	if err != nil {
		return pathFail(a.Path, err)
	}
	env.keepPrior("write_file", rel)
	if err := env.Workspace.writeAtomic(a.Path, rel, []byte(a.Content)); err != nil {
		return pathFail(a.Path, err)
	}
	env.wrote(rel, []byte(a.Content))
	return OK(map[string]any{"path": a.Path, "bytes": len(a.Content)})
}
