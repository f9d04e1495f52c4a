package tools

import (
	"context"
	"encoding/json"

	"github.com/guildhall/guildhall/store"
)

// writePlan is write_plan {content}: replace the current run's plan.md
// atomically.
type writePlan struct{}

func (writePlan) Manifest() Manifest { return manifestOf("write_plan") }

func (writePlan) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Content string `json:"content"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	root, err := runRoot(env, env.RunID, true)
	if err != nil {
		return runFail("run directory", err)
	}
	defer root.Close()
	if err := writeAtomicIn(root, store.PlanFile, store.PlanFile, []byte(a.Content)); err != nil {
		return runFail("plan", err)
	}
	return OK(map[string]any{"runId": env.RunID, "bytes": len(a.Content)})
}
