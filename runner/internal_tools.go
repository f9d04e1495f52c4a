package runner

import (
	"context"
	"encoding/json"

	"github.com/guildhall/guildhall/tools"
)

// internalHandler runs an executor-implemented tool against the run state.
type internalHandler func(ctx context.Context, f *Frame, args json.RawMessage) tools.Result

// internalTools lists the tools the executor implements besides agent and
// finish: they need the role stack, not just the workspace.
func (r *Run) internalTools() map[string]internalHandler {
	return map[string]internalHandler{}
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
