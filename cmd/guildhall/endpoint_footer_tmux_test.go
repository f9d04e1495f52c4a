package main

import (
	"net/url"
	"testing"

	"github.com/guildhall/guildhall/internal/fakellm"
)

// TestEndpointDialogChangeShowsInTheFooter: on the real binary, the
// endpoint dialog's e sets a new base URL, and the footer names the new
// host, not the one the console started with.
func TestEndpointDialogChangeShowsInTheFooter(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("endpoint-footer")
	closed := "127.0.0.1:" + freePort(t) // a port that refuses: the dialog opens at once
	f := fakellm.New()
	defer f.Close()
	u, err := url.Parse(f.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	c := startConsolePane(t, h, ws, "--base-url", "http://"+closed+"/v1")
	c.waitFor("The model endpoint did not answer", "@ "+closed)
	c.keys("e")
	c.waitFor("Model endpoint settings")
	c.keys("Tab", "C-u")
	c.tmux("send-keys", "-t", c.name, "-l", f.BaseURL())
	c.keys("Enter")
	c.waitFor("fake-model @ " + u.Host)
	c.keys("Escape", "q")
}
