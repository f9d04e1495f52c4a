package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// askHuman is ask_human {question, context?, options?} → {answer}. The
// runner records the question and answer events; this tool only asks.
type askHuman struct{}

func (askHuman) Manifest() Manifest { return manifestOf("ask_human") }

func (askHuman) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Question string   `json:"question"`
		Context  string   `json:"context"`
		Options  []Option `json:"options"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	if strings.TrimSpace(a.Question) == "" {
		return Fail(KindInvalidArguments, "question is empty")
	}
	if a.Options != nil && (len(a.Options) < 2 || len(a.Options) > 6) {
		return Fail(KindInvalidArguments, "options must hold 2 to 6 choices when given")
	}
	for i, o := range a.Options {
		if strings.TrimSpace(o.Label) == "" {
			return Fail(KindInvalidArguments, fmt.Sprintf("option %d has an empty label", i+1))
		}
	}
	if env.Asker == nil {
		return Fail(KindUnavailable, "no operator available to answer; make a reasonable assumption, state it, and continue")
	}
	answer, err := env.Asker.Ask(ctx, Question{Question: a.Question, Context: a.Context, Options: a.Options})
	if err != nil {
		return Fail(KindUnavailable, "no operator available to answer; make a reasonable assumption, state it, and continue")
	}
	return OK(map[string]any{"answer": answer})
}
