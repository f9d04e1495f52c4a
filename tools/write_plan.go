package tools

import (
	"context"
	"encoding/json"
	"fmt"

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
	if len(a.Content) > store.MaxPlanBytes {
		// A larger plan.md would be refused by every reader as foreign.
		return Fail(KindInvalidArguments, fmt.Sprintf("the plan is %d bytes; a plan may hold at most %d", len(a.Content), store.MaxPlanBytes))
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
