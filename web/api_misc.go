package web

import (
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

// ConfigRole is a guild role as /api/config lists it.
type ConfigRole struct {
	Name  string   `json:"name"`
	Tools []string `json:"tools"`
}

// Config is GET /api/config: the guild's shape and labels and the build.
// It carries no provider URL, key, model name or other deployment detail.
type Config struct {
	Version       string               `json:"version"`
	EntryRole     string               `json:"entryRole"`
	Roles         []ConfigRole         `json:"roles"`
	Tools         []string             `json:"tools"`
	Labels        render.LabelSet      `json:"labels"`
	Visualization render.Visualization `json:"visualization"`
	Efforts       []string             `json:"efforts"`
	LogLevels     []string             `json:"logLevels"`
	// Queue is true when the server serves the task queue (/api/queue).
	Queue bool `json:"queue"`
	// Setup describes, one line each, what the session runs with: the
	// sandbox policy and the workspace trust decision (WithSetup). They are
	// the program's own sentences, shown as text.
	Setup []string `json:"setup"`
}

func (s *Server) handleConfig(w http.ResponseWriter, r *http.Request) {
	c := Config{Version: s.version, EntryRole: s.guild.EntryRole, Roles: []ConfigRole{}, Tools: []string{},
		Labels: s.labels, Visualization: s.labels.Visualization,
		Efforts: []string{"quick", "standard", "thorough"}, LogLevels: []string{runner.LogFull, runner.LogStandard},
		Queue: s.queue != nil, Setup: append([]string{}, s.setup...)}
	seen := map[string]bool{}
	for _, name := range s.guild.RoleNames() {
		role := s.guild.Roles[name]
		c.Roles = append(c.Roles, ConfigRole{Name: name, Tools: append([]string{}, role.Tools...)})
		for _, t := range role.Tools {
			if !seen[t] {
				seen[t] = true
				c.Tools = append(c.Tools, t)
			}
		}
	}
	sort.Strings(c.Tools)
	writeJSON(w, http.StatusOK, c)
}

// Settings is the body of GET and PUT /api/settings.
type Settings struct {
	Effort   string `json:"effort"`
	LogLevel string `json:"logLevel"`
}

func (s *Server) handleGetSettings(w http.ResponseWriter, r *http.Request) {
	st := s.sess.Workspace().ReadSettings()
	writeJSON(w, http.StatusOK, Settings{Effort: st.Effort, LogLevel: st.LogLevel})
}

func validEffort(e string) bool   { return e == "" || runner.ValidEffort(e) }
func validLogLevel(l string) bool { return l == "" || l == runner.LogFull || l == runner.LogStandard }

func (s *Server) handlePutSettings(w http.ResponseWriter, r *http.Request) {
	var in Settings
	if !decodeBody(w, r, &in) {
		return
	}
	if !validEffort(in.Effort) || !validLogLevel(in.LogLevel) {
		writeError(w, http.StatusBadRequest, "invalid_body")
		return
	}
	if err := s.sess.Workspace().WriteSettings(store.Settings{Effort: in.Effort, LogLevel: in.LogLevel}); err != nil {
		writeError(w, http.StatusInternalServerError, "internal")
		return
	}
	writeJSON(w, http.StatusOK, in)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.sess.Health())
}

// QuestionView is a pending question as GET /api/questions lists it.
type QuestionView struct {
	ID            string      `json:"id"`
	RunID         string      `json:"runId"`
	Role          string      `json:"role,omitempty"`
	RoleID        string      `json:"roleId,omitempty"`
	Question      string      `json:"question"`
	Context       string      `json:"context,omitempty"`
	AssistantText string      `json:"assistantText,omitempty"`
	Options       []OptionOut `json:"options"`
	AskedAt       string      `json:"askedAt"`
}

// OptionOut is a suggested answer.
type OptionOut struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

func (s *Server) handleQuestions(w http.ResponseWriter, r *http.Request) {
	qs := s.sess.Questions()
	out := make([]QuestionView, 0, len(qs))
	for _, q := range qs {
		v := QuestionView{ID: q.ID, RunID: q.RunID, Role: q.Role, RoleID: q.RoleID, Question: clipText(q.Question),
			Context: clipText(q.Context), AssistantText: clipText(q.AssistantText), Options: []OptionOut{},
			AskedAt: q.AskedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")}
		for _, o := range q.Options {
			v.Options = append(v.Options, OptionOut{Label: o.Label, Description: o.Description})
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"questions": out})
}

type answerBody struct {
	ID     string `json:"id"`
	Answer string `json:"answer"`
	// Source names the answering client in the log: "browser" (the
	// default) or "attach" (a terminal attached with guildhall attach).
	Source string `json:"source,omitempty"`
}

func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	var in answerBody
	if !decodeBody(w, r, &in) {
		return
	}
	if in.Source == "" {
		in.Source = "browser"
	}
	if in.ID == "" || strings.TrimSpace(in.Answer) == "" || (in.Source != "browser" && in.Source != "attach") {
		writeError(w, http.StatusBadRequest, "invalid_body")
		return
	}
	switch err := s.sess.Answer(in.ID, in.Answer, in.Source); {
	case errors.Is(err, runner.ErrUnknownQuestion):
		writeError(w, http.StatusNotFound, "unknown_question")
	case errors.Is(err, runner.ErrAlreadyAnswered):
		writeError(w, http.StatusConflict, "already_answered")
	case err != nil:
		writeError(w, http.StatusInternalServerError, "internal")
	default:
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	}
}
