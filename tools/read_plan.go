package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/guildhall/guildhall/internal/runetext"
	"github.com/guildhall/guildhall/store"
)

// read_plan limits: characters returned, bytes read.
const (
	planMaxChars = 20_000
	planMaxBytes = 1 << 20
)

// readPlan is read_plan {runId?}: a run's plan.md, the current run's by
// default.
type readPlan struct{}

func (readPlan) Manifest() Manifest { return manifestOf("read_plan") }

func (readPlan) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		RunID *string `json:"runId"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	runID := env.RunID
	if a.RunID != nil {
		if !store.ValidRunID(*a.RunID) {
			return Fail(KindInvalidArguments, fmt.Sprintf("runId %s is not of the form run-YYYYMMDD-HHMMSS", showPath(*a.RunID)))
		}
		runID = *a.RunID
	}
	root, err := runRoot(env, runID, false)
	if err != nil {
		return runFail("plan for "+runID, err)
	}
	defer root.Close()
	f, err := openRunFile(root, store.PlanFile)
	if err != nil {
		return runFail("plan for "+runID, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, planMaxBytes))
	if err != nil {
		return runFail("plan for "+runID, classify(err))
	}
	text := runetext.Decode(data)
	total := utf8.RuneCountInString(text)
	content, truncated := capChars(text, planMaxChars)
	return OK(map[string]any{"runId": runID, "content": content, "truncated": truncated, "totalChars": total})
}
