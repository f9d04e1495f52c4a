package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInquiryAndNoticesUnderTmux: on the real binary, an inquiry sent
// while the demo's question is open is acknowledged and listed by i, and
// the "Answer sent." notice leaves the banner after a few seconds.
func TestInquiryAndNoticesUnderTmux(t *testing.T) {
	needTmux(t)
	h := newHostile(t)
	c := &tmuxConsole{t: t, name: fmt.Sprintf("guildhall-notices-%d", os.Getpid())}
	script := fmt.Sprintf("TERM=xterm-256color HOME=%s %s demo --speed 0 2>%s; sleep 60", h.home, h.bin, filepath.Join(h.root, "stderr"))
	c.tmux("new-session", "-d", "-s", c.name, "-x", "100", "-y", "30", script)
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", c.name).Run() })

	c.waitFor("Question", "Should this run only fix the failing tests")
	c.keys("Escape", "i")
	c.tmux("send-keys", "-t", c.name, "-l", "How far along are you?")
	c.keys("Enter")
	c.waitFor("Inquiry sent: the run takes it after your answer.")
	c.keys("i")
	screen := c.waitFor("You asked: How far along are you?")
	if strings.Contains(screen, "No inquiries yet.") {
		t.Errorf("i says there are no inquiries:\n%s", screen)
	}
	c.keys("Escape", "a")
	c.waitFor("1. Only fix the failing tests")
	c.keys("1", "Enter")
	c.waitFor("Answer sent.")
	deadline := time.Now().Add(30 * time.Second)
	for strings.Contains(c.capture(), "Answer sent.") {
		if time.Now().After(deadline) {
			t.Fatalf("the notice never left the banner:\n%s", c.capture())
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.keys("Escape", "q")
}
