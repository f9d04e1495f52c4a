package mcp

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/guildhall/guildhall/internal/mcptest"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// A server whose Verify fails (its pinned program changed since the
// operator trusted the workspace) is not started: the start fails with
// Verify's reason, as any failed start does. One whose Verify passes is
// asked before it starts.
func TestServerVerifiedBeforeItStarts(t *testing.T) {
	f := newFixture(t, sandbox.WorkspaceWrite)
	var asked atomic.Int32
	good := f.stdio(mcptest.ModeTools)
	good.Verify = func() error { asked.Add(1); return nil }
	changed := f.stdio(mcptest.ModeTools)
	changed.Verify = func() error {
		return errors.New("the workspace files it runs (mcp/srv.py) changed since you trusted the workspace, so it is not started")
	}
	m := f.manager(map[string]Config{"good": good, "changed": changed})
	if _, err := m.Tools(ctxT(t), "good"); err != nil || asked.Load() != 1 {
		t.Fatalf("good: %v, Verify asked %d times", err, asked.Load())
	}
	_, err := m.Tools(ctxT(t), "changed")
	if err == nil || !strings.Contains(err.Error(), "changed since you trusted the workspace") {
		t.Fatalf("changed: %v", err)
	}
	var failed bool
	for _, s := range f.reported() {
		failed = failed || s.Server == "changed" && s.State == StateFailed
	}
	if !failed {
		t.Errorf("no failed state for the changed server: %+v", f.reported())
	}
}
