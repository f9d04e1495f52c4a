package web

import (
	"net/http"
	"strconv"

	"github.com/guildhall/guildhall/render"
)

// maxDeltaEntities is the largest delta the flow endpoint sends; a client
// further behind gets a snapshot.
const maxDeltaEntities = 2000

func (s *Server) handleFlow(w http.ResponseWriter, r *http.Request) {
	s.serveFlow(w, r, r.PathValue("id"))
}

func (s *Server) handleLatestFlow(w http.ResponseWriter, r *http.Request) {
	id, ok := s.latestRunID()
	if !ok {
		writeError(w, http.StatusNotFound, "no_runs")
		return
	}
	s.serveFlow(w, r, id)
}

// serveFlow answers with the render envelope for a client at ?version=N
// (or ?since=N), or with one operation's details for ?operation=ID.
func (s *Server) serveFlow(w http.ResponseWriter, r *http.Request, runID string) {
	q := r.URL.Query()
	var version int64
	for _, name := range []string{"version", "since"} {
		if raw := q.Get(name); raw != "" {
			n, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || n < 0 {
				writeError(w, http.StatusBadRequest, "invalid_query")
				return
			}
			version = n
		}
	}
	v, err := s.views.get(runID)
	if err != nil {
		writeError(w, http.StatusNotFound, "unknown_run")
		return
	}
	if opID := q.Get("operation"); opID != "" {
		v.mu.Lock()
		op, ok := v.model.OperationDetails(opID)
		v.mu.Unlock()
		if !ok {
			writeError(w, http.StatusNotFound, "unknown_operation")
			return
		}
		writeJSON(w, http.StatusOK, op)
		return
	}
	v.mu.Lock()
	env := v.model.Since(version, maxDeltaEntities)
	if env.Kind == render.EnvelopeSnapshot && env.Model != nil && env.Model.RunID == "" {
		env.Model.RunID = runID
	}
	v.mu.Unlock()
	writeJSON(w, http.StatusOK, env)
}
