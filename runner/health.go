package runner

import (
	"sync"
	"time"
)

// Provider health states.
const (
	HealthOK        = "ok"
	HealthDegraded  = "degraded"
	HealthSuspended = "suspended"
)

// HealthView is the restricted view of provider health that clients may
// show: a state, a coarse category, times and counters, and which of the
// deployment's named models it is about. It never carries the provider URL,
// key, the server's model name, headers, bodies or error messages.
type HealthView struct {
	State string `json:"state"`
	// Model is the deployment's name of the model whose endpoint this is
	// (one of deployment.json's models), "" for the model block.
	Model               string     `json:"model,omitempty"`
	Category            string     `json:"category,omitempty"`
	LastSuccessAt       *time.Time `json:"lastSuccessAt,omitempty"`
	LastFailureAt       *time.Time `json:"lastFailureAt,omitempty"`
	ConsecutiveFailures int        `json:"consecutiveFailures"`
	NextProbeAt         *time.Time `json:"nextProbeAt,omitempty"`
	SuspendedRunID      string     `json:"suspendedRunId,omitempty"`
}

// Health tracks provider health across a session's runs.
type Health struct {
	mu   sync.Mutex
	view HealthView
	// answered is set once the endpoint answered in this process (a model
	// list at start, or any reply): until then a failure is a setup
	// problem, not an outage to wait out.
	answered bool
}

// NewHealth starts in the ok state.
func NewHealth() *Health { return &Health{view: HealthView{State: HealthOK}} }

// Snapshot is the current view.
func (h *Health) Snapshot() HealthView {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.view
}

func (h *Health) success(at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answered = true
	t := at.UTC()
	h.view = HealthView{State: HealthOK, LastSuccessAt: &t, LastFailureAt: h.view.LastFailureAt}
}

// markAnswered records that the endpoint answered (a well-formed reply
// that was still unusable, or the start-up probe).
func (h *Health) markAnswered() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answered = true
}

// hasAnswered reports whether the endpoint ever answered in this process.
func (h *Health) hasAnswered() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.answered
}

func (h *Health) failure(at time.Time, category string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := at.UTC()
	h.view.LastFailureAt = &t
	h.view.Category = category
	h.view.ConsecutiveFailures++
	if h.view.State == HealthOK {
		h.view.State = HealthDegraded
	}
	return h.view.ConsecutiveFailures
}

func (h *Health) suspend(runID string, nextProbe time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := nextProbe.UTC()
	h.view.State, h.view.SuspendedRunID, h.view.NextProbeAt = HealthSuspended, runID, &t
}

// suspensionCopy is the platform-authored text of a suspension record and
// the banner, per failure category. It never quotes the provider.
func suspensionCopy(category string) string {
	switch category {
	case "auth":
		return "The model provider refused the credentials. The run is suspended until it accepts them again."
	case "rate_limit":
		return "The model provider is rate-limiting requests. The run is suspended and will retry when it allows."
	case "timeout":
		return "The model provider stopped answering in time. The run is suspended and is probing it."
	case "network":
		return "The model provider cannot be reached. The run is suspended and is probing it."
	default:
		return "The model provider is failing. The run is suspended and is probing it."
	}
}
