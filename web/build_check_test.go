package web

import (
	"testing"

	"github.com/guildhall/guildhall/web/assets"
	"github.com/guildhall/guildhall/web/static"
)

// TestClientBuilds builds every client entry point (test suites included),
// so a TypeScript syntax or import error fails here with file:line:col.
func TestClientBuilds(t *testing.T) {
	if err := assets.New(static.Files(), assets.WithTestSuites()).Check(); err != nil {
		t.Fatal(err)
	}
}
