package runner

import (
	"encoding/json"
	"fmt"
	"time"
)

// Checkpoint is state.json: everything needed to resume a run.
type Checkpoint struct {
	RunID          string    `json:"runId"`
	StartedAt      time.Time `json:"startedAt"`
	Counter        int       `json:"counter"`
	LearnedCeiling int       `json:"learnedCeiling,omitempty"`
	// LearnedCeilings are the same per named model (a model per role):
	// each endpoint's rejections teach its own ceiling.
	LearnedCeilings map[string]int `json:"learnedCeilings,omitempty"`
	Stack           []*Frame       `json:"stack"`
	// Park and WriterStarted carry a queued run's parking rule across a
	// restart.
	Park          bool `json:"park,omitempty"`
	WriterStarted bool `json:"writerStarted,omitempty"`
	// ProviderState is a stateful provider's position (the scripted model).
	ProviderState json.RawMessage `json:"providerState,omitempty"`
	WrittenAt     time.Time       `json:"writtenAt"`
	// Usage is what the run has spent against its budget so far, so that
	// a resume counts on from it (budget.go).
	Usage *Usage `json:"usage,omitempty"`
}

// checkpoint writes state.json atomically. A failure is recorded, not
// fatal: the run goes on and the previous checkpoint stays valid.
func (r *Run) checkpoint() {
	cp := Checkpoint{RunID: r.id, StartedAt: r.startedAt, Counter: r.counter, LearnedCeiling: r.learnedCeiling, LearnedCeilings: r.learnedCeilings, Stack: r.stack, WrittenAt: r.now().UTC(),
		Park: r.opts.Park, WriterStarted: r.writerStarted}
	u := r.budget.usage(r.now())
	cp.Usage = &u
	if sp, ok := r.opts.Provider.(Stateful); ok {
		cp.ProviderState = sp.SaveState()
	}
	b, err := r.cpEncoder.encode(cp)
	if err != nil {
		if r.logErr == nil {
			r.logErr = fmt.Errorf("encode checkpoint: %w", err)
		}
		return
	}
	if err := r.ws.WriteState(r.id, b); err != nil && r.logErr == nil {
		r.logErr = err
	}
}

func (r *Run) removeCheckpoint() {
	if err := r.ws.RemoveState(r.id); err != nil && r.logErr == nil {
		r.logErr = err
	}
}
