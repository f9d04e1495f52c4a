package web

// The result's "what changed" and the model meters: the same change set
// the terminal's `w` shows (runner.Session.Changes) and the model's name
// and context use its footer shows (tui/meters.go), for the browser.

import (
	"errors"
	"net/http"
)

// ChangesView is GET /api/runs/:id/changes: the files as they are now
// against the run's start. Patch is raw workspace text, which the client
// shows only as text.
type ChangesView struct {
	RunID     string           `json:"runId"`
	Source    string           `json:"source"`         // git or log
	Base      string           `json:"base,omitempty"` // the commit a git diff is against
	Files     []FileChangeView `json:"files"`
	Truncated bool             `json:"truncated,omitempty"`
	// Error says, in the program's words, why the change set could not be
	// read (a run with neither a git base nor a log): the answer is still
	// 200, as "could not tell" is what the result shows.
	Error string `json:"error,omitempty"`
}

// FileChangeView is one changed file.
type FileChangeView struct {
	Path    string `json:"path"`
	Status  string `json:"status"` // modified, added, deleted, binary, too large
	Patch   string `json:"patch,omitempty"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Note    string `json:"note,omitempty"`
}

func (s *Server) handleChanges(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.sess.Workspace().ReadMeta(id); err != nil {
		writeError(w, http.StatusNotFound, "unknown_run")
		return
	}
	ch, err := s.sess.Changes(r.Context(), id)
	if err != nil {
		if errors.Is(err, r.Context().Err()) {
			return
		}
		writeJSON(w, http.StatusOK, ChangesView{RunID: id, Files: []FileChangeView{}, Error: err.Error()})
		return
	}
	out := ChangesView{RunID: id, Source: ch.Source, Base: ch.Base, Files: make([]FileChangeView, 0, len(ch.Files)), Truncated: ch.Truncated}
	for _, f := range ch.Files {
		out.Files = append(out.Files, FileChangeView{Path: f.Path, Status: f.Status, Patch: f.Patch, Added: f.Added, Removed: f.Removed, Note: f.Note})
	}
	writeJSON(w, http.StatusOK, out)
}

// MetersView is the run view's model meters: the model the run names (else
// the session's), the role instance that called it last and how much of
// the context window its conversation fills. Only what the endpoint
// reported counts; Window is 0 when neither the deployment nor a
// compaction gave one.
type MetersView struct {
	Model   string `json:"model,omitempty"`
	RoleID  string `json:"roleId,omitempty"`
	Context int    `json:"context"`
	Window  int    `json:"window"`
}

// meters is the run view's meters. The caller holds v.mu.
func (s *Server) meters(v *runView) *MetersView {
	m := v.facts.meters
	out := &MetersView{Model: m.model, RoleID: m.active, Context: m.context[m.active], Window: m.window}
	mi := s.sess.ModelInfo()
	if out.Model == "" {
		out.Model = mi.Name
	}
	if mi.ContextWindow > 0 {
		out.Window = mi.ContextWindow
	}
	return out
}
