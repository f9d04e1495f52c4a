package runner

import (
	"context"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// suspendable reports whether a failure category is one that waiting can
// cure. A malformed reply or a refused request is the role's problem, not
// the provider's health.
func suspendable(c provider.Category) bool {
	switch c {
	case provider.CategoryServer, provider.CategoryTimeout, provider.CategoryRateLimit,
		provider.CategoryNetwork, provider.CategoryCutStream, provider.CategoryAuth:
		return true
	}
	return false
}

func (r *Run) healthSettings() (suspendAfter int, probe time.Duration, auto bool) {
	h := r.opts.Deployment.Executor.ProviderHealth
	suspendAfter = h.SuspendAfter
	if suspendAfter == 0 {
		suspendAfter = 3
	}
	probe = time.Duration(h.ProbeSeconds) * time.Second
	if probe <= 0 {
		probe = 30 * time.Second
	}
	auto = h.AutoResume == nil || *h.AutoResume
	return suspendAfter, probe, auto
}

// ResumeFromSuspension asks a suspended run to retry its provider now.
func (r *Run) ResumeFromSuspension() bool {
	r.ctl.mu.Lock()
	defer r.ctl.mu.Unlock()
	if r.ctl.wake == nil {
		return false
	}
	select {
	case r.ctl.wake <- struct{}{}:
	default:
	}
	return true
}

// suspend parks the run while the provider is down: checkpointed (the
// last safe point stands), a platform-authored suspension record in
// meta.json, status suspended, and a cheap probe on a schedule. It returns
// when the provider answers again (and, without auto-resume, the operator
// said so) or errStopped when the run is stopped meanwhile.
func (r *Run) suspend(ctx context.Context, category string, m roleModel) error {
	defer r.holdWall()()
	_, every, auto := r.healthSettings()
	now := r.now().UTC()
	copyText := suspensionText(category, r.label(m))
	r.metaMu.Lock()
	r.meta.Status = store.StatusSuspended
	r.meta.Suspension = &store.Suspension{Category: category, Message: copyText, SuspendedAt: now, Model: m.name}
	r.metaMu.Unlock()
	if err := r.saveMeta(); err != nil && r.logErr == nil {
		r.logErr = err
	}
	m.health.suspend(r.id, now.Add(every))
	r.emit(event.RunStatus, event.RunStatusPayload{Status: store.StatusSuspended, Reason: copyText})
	_ = r.log.Sync()

	wake := make(chan struct{}, 1)
	r.ctl.mu.Lock()
	r.ctl.wake = wake
	r.ctl.mu.Unlock()
	defer func() {
		r.ctl.mu.Lock()
		r.ctl.wake = nil
		r.ctl.mu.Unlock()
	}()
	operator := false
	for {
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return errStopped
		case <-wake:
			operator = true
		case <-t.C:
		}
		t.Stop()
		if (auto || operator) && r.probe(ctx, m) {
			break
		}
		m.health.suspend(r.id, r.now().Add(every))
	}
	r.metaMu.Lock()
	r.meta.Status, r.meta.Suspension = store.StatusRunning, nil
	r.metaMu.Unlock()
	if err := r.saveMeta(); err != nil && r.logErr == nil {
		r.logErr = err
	}
	m.health.success(r.now())
	r.emit(event.RunStatus, event.RunStatusPayload{Status: store.StatusRunning, Reason: "the model provider answered again"})
	return nil
}

// probe checks cheaply whether the provider answers: a model listing
// where the provider has one.
func (r *Run) probe(ctx context.Context, m roleModel) bool {
	pr, ok := m.prov.(provider.Prober)
	if !ok {
		return true // nothing cheaper than the real request: just retry it
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := pr.Probe(pctx)
	return err == nil
}
