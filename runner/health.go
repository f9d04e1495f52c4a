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
// show: a state, a coarse category, times and counters. It never carries the
// provider URL, key, model name, headers, bodies or error messages.
type HealthView struct {
	State               string     `json:"state"`
	Category            string     `json:"category,omitempty"`
	LastSuccessAt       *time.Time `json:"lastSuccessAt,omitempty"`
	LastFailureAt       *time.Time `json:"lastFailureAt,omitempty"`
	ConsecutiveFailures int        `json:"consecutiveFailures"`
	NextProbeAt         *time.Time `json:"nextProbeAt,omitempty"`
	SuspendedRunID      string     `json:"suspendedRunId,omitempty"`
}

// health tracks provider health across a session's runs.
type health struct {
	mu   sync.Mutex
	view HealthView
}

func newHealth() *health { return &health{view: HealthView{State: HealthOK}} }

func (h *health) snapshot() HealthView {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.view
}

func (h *health) success(at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := at.UTC()
	h.view = HealthView{State: HealthOK, LastSuccessAt: &t, LastFailureAt: h.view.LastFailureAt}
}

func (h *health) failure(at time.Time, category string) int {
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

func (h *health) suspend(runID string, nextProbe time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := nextProbe.UTC()
	h.view.State, h.view.SuspendedRunID, h.view.NextProbeAt = HealthSuspended, runID, &t
}
