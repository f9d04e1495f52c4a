package main

// The "Models" section of `guildhall show`: which model each role ran on
// (role_start names it) and what the calls to each cost, as the endpoint
// reported it, so a run with a strong planner and a fast coder shows both.

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
)

// modelUse folds role_start and llm_call events by model.
type modelUse struct {
	byInstance map[string]string // role instance → model label
	roles      map[string]map[string]bool
	calls      map[string]*modelCalls
	order      []string
}

type modelCalls struct {
	calls, prompt, cached, completion int
}

func (u *modelUse) apply(e event.Event) {
	switch e.Type {
	case event.RoleStart:
		var p event.RoleStartPayload
		if e.Decode(&p) != nil {
			return
		}
		label := render.ModelLabel(p.Model, p.ModelRef)
		if label == "" {
			return
		}
		if u.byInstance == nil {
			u.byInstance, u.roles, u.calls = map[string]string{}, map[string]map[string]bool{}, map[string]*modelCalls{}
		}
		u.byInstance[p.RoleID] = label
		if u.roles[label] == nil {
			u.roles[label] = map[string]bool{}
			u.calls[label] = &modelCalls{}
			u.order = append(u.order, label)
		}
		u.roles[label][render.SanitizeLine(p.Role)] = true
	case event.LLMCall:
		var p event.LLMCallPayload
		if e.Decode(&p) != nil {
			return
		}
		c := u.calls[u.byInstance[p.RoleID]]
		if c == nil {
			return
		}
		c.calls++
		c.prompt += p.Usage.PromptTokens
		c.cached += p.Usage.CachedPromptTokens
		c.completion += p.Usage.CompletionTokens
	}
}

// show prints the section; nothing when the log names no model.
func (u *modelUse) show(out io.Writer) {
	if len(u.order) == 0 {
		return
	}
	fmt.Fprintln(out, "\nModels")
	for _, label := range u.order {
		roles := make([]string, 0, len(u.roles[label]))
		for r := range u.roles[label] {
			roles = append(roles, r)
		}
		sort.Strings(roles)
		who := strings.Join(roles, ", ")
		if len(u.order) == 1 {
			who = "every role" // one model did all the work
		}
		c := u.calls[label]
		line := fmt.Sprintf("  %s: %s · %s, %d prompt tokens", label, who, plural(c.calls, "call"), c.prompt)
		if c.cached > 0 {
			line += fmt.Sprintf(" (%d cached)", c.cached)
		}
		fmt.Fprintln(out, line+fmt.Sprintf(", %d completion tokens", c.completion))
	}
}
