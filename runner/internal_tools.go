package runner

import (
	"context"
	"encoding/json"

	"github.com/guildhall/guildhall/tools"
)

// internalHandler runs an executor-implemented tool against the run state.
type internalHandler func(ctx context.Context, f *Frame, args json.RawMessage) tools.Result
