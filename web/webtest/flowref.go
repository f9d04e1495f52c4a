package webtest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// FlowReference is what the flow graph must show for a model, computed in
// Go from render's InteractionModel: each role instance (render.RoleTree)
// with the participant it hangs under, and the number of nodes the
// terminal's graph has (tui/flow.go: per stack, its root, one node per
// role instance or human answerer called on it, and one per caller and
// tool pair).
type FlowReference struct {
	// Callers maps each role instance to its caller: its parent instance,
	// or the root of its stack (the human, an interrupt, an inquiry's asker).
	Callers map[string]string
	// Nodes counts every node of every lane.
	Nodes int
	// Tools counts the tool nodes (one per caller and tool).
	Tools int
}

// ModelFromLog replays a run's log.jsonl into a render.Model, as every
// reader of the log does (torn lines skipped).
func ModelFromLog(path string) (*render.Model, error) {
	m := render.NewModel()
	_, err := store.ReadLog(path, func(seq int64, rec []byte) error {
		var e event.Event
		if json.Unmarshal(rec, &e) == nil {
			e.Seq = seq
			m.Apply(e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return m, nil
}

// ReferenceFlow computes the FlowReference of m.
func ReferenceFlow(m *render.Model) FlowReference {
	ref := FlowReference{Callers: map[string]string{}}
	var walk func(parent string, ns []render.RoleNode)
	walk = func(parent string, ns []render.RoleNode) {
		for _, n := range ns {
			caller := parent
			if caller == "" {
				if st, ok := m.StackByID(n.Stack); ok {
					caller = st.Root
				}
			}
			ref.Callers[n.ID] = caller
			walk(n.ID, n.Children)
		}
	}
	walk("", render.RoleTree(m))

	keys := map[string]bool{}
	for _, op := range m.Operations {
		if op.Kind != render.OpCall {
			continue
		}
		st, ok := m.StackByID(op.Stack)
		root := op.Source
		if ok {
			root = st.Root
		}
		keys[op.Stack+"\x00"+root] = true
		key := op.Destination
		if p, ok := m.Participant(op.Destination); ok && p.Kind == render.KindTool {
			key = op.Source + "\x00" + op.Destination
			if !keys[op.Stack+"\x00"+key] {
				ref.Tools++
			}
		}
		keys[op.Stack+"\x00"+key] = true
	}
	ref.Nodes = len(keys)
	return ref
}

// Compare lists how the drawn graph differs from the reference: a role
// instance missing, drawn twice, or under another caller, and node counts.
func (ref FlowReference) Compare(drawn FlowNodes) []string {
	var out []string
	seen := map[string]int{}
	tools := 0
	for _, n := range drawn.Nodes {
		switch n.Kind {
		case "role":
			seen[n.Participant]++
			if want, ok := ref.Callers[n.Participant]; !ok {
				out = append(out, "the graph draws "+n.Participant+", which is no role instance of the run")
			} else if n.Caller != want {
				out = append(out, fmt.Sprintf("%s hangs under %q, want %q", n.Participant, n.Caller, want))
			}
		case "tool":
			tools++
		}
	}
	var missing []string
	for id := range ref.Callers {
		switch seen[id] {
		case 0:
			missing = append(missing, id)
		case 1:
		default:
			out = append(out, fmt.Sprintf("%s is drawn %d times", id, seen[id]))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		if len(missing) > 10 {
			missing = append(missing[:10], fmt.Sprintf("and %d more", len(missing)-10))
		}
		out = append(out, "role instances not drawn: "+strings.Join(missing, ", "))
	}
	if tools != ref.Tools {
		out = append(out, fmt.Sprintf("%d tool nodes drawn, the terminal's graph has %d", tools, ref.Tools))
	}
	if drawn.Total != ref.Nodes || len(drawn.Nodes) != ref.Nodes {
		out = append(out, fmt.Sprintf("the graph has %d nodes (%d drawn), the terminal's graph has %d", drawn.Total, len(drawn.Nodes), ref.Nodes))
	}
	return out
}
