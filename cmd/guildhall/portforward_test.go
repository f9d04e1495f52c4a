package main

// The browser console over SSH (issue 29, points 1 and 2): the operator
// forwards a local port to the console's, often a different one, and opens
// the printed URL on that port. forwardPort is that forward (what ssh -L
// does with each connection); the tests drive the real binary through it.

import (
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guildhall/guildhall/web/webtest"
)

// forwardPort listens on a fresh loopback port and copies every
// connection to and from target, byte for byte, as ssh -L
// LOCAL:target does: the browser names the forward's port in Host and
// Origin. It returns the local port.
func forwardPort(t *testing.T, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// sshCommand matches the forward the binary prints under $SSH_CONNECTION.
var sshCommand = regexp.MustCompile(`^  over SSH, run on your machine: ssh -L (\d+):127\.0\.0\.1:(\d+) (\S+)  \(then open the URL above; docs/ssh\.md\)$`)

// docForwards are the ssh -L forwards docs/ssh.md tells the operator to
// run, as [local, target host, remote] and whether -N is given; the test
// fails when the page holds none of the shape the console's forwarder
// test reproduces.
func docForwards(t *testing.T) (forwards [][3]string, printed string, withN bool) {
	t.Helper()
	raw, err := os.ReadFile("../../docs/ssh.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`ssh (-N )?-L (\d+):([0-9.]+):(\d+) \S+`)
	for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
		forwards = append(forwards, [3]string{m[2], m[3], m[4]})
		withN = withN || m[1] != ""
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if sshCommand.MatchString(line) {
			printed = line
		}
	}
	return forwards, printed, withN
}

// TestBrowserThroughAPortForward: `guildhall demo --web` over SSH prints
// the URL and the ssh -L command to run locally. The test does what
// docs/ssh.md says, with another local port (the forward's own), opens
// http://localhost:LOCAL/?token=… in Chromium, and answers the demo's
// question there: reads, the event stream and the write all pass the
// guards through the forward. A foreign name through the same forward is
// still refused.
func TestBrowserThroughAPortForward(t *testing.T) {
	d := startWebDemo(t, "SSH_CONNECTION=203.0.113.9 51234 198.51.100.7 22", "USER=alice")
	url := d.url(t)
	hint := d.next(t)
	m := sshCommand.FindStringSubmatch(hint)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(strings.SplitN(url, "/?", 2)[0], "http://"))
	if m == nil || m[1] != port || m[2] != port || m[3] != "alice@198.51.100.7" {
		t.Fatalf("the line under the URL %q is not `ssh -L %s:127.0.0.1:%s alice@198.51.100.7`", hint, port, port)
	}

	// docs/ssh.md shows the printed line as it is, and a forward to
	// another local port in a second terminal (-N), to 127.0.0.1 on the
	// remote side: what this test does next.
	forwards, printedInDoc, withN := docForwards(t)
	other := false
	for _, f := range forwards {
		if f[1] != "127.0.0.1" {
			t.Errorf("docs/ssh.md forwards to %s, not the console's loopback", f[1])
		}
		other = other || f[0] != f[2]
	}
	if !other || !withN || printedInDoc == "" {
		t.Errorf("docs/ssh.md lacks a forward to another local port (%v), ssh -N (%v) or the printed line (%q)", other, withN, printedInDoc)
	}

	// ssh -N -L LOCAL:127.0.0.1:PORT, LOCAL another free port.
	local := forwardPort(t, "127.0.0.1:"+m[2])
	if local == port {
		t.Fatal("the forward must use another port")
	}
	_, token, _ := strings.Cut(url, "?token=")
	viaForward := "http://localhost:" + local + "/?token=" + token

	// A foreign name through the forward: refused, even with the token.
	for _, host := range []string{"evil.example:" + local, "evil.example:" + port, "localhost.evil.example:" + local} {
		code, _ := do(t, "GET", "http://127.0.0.1:"+local+"/api/health", token, "", func(r *http.Request) { r.Host = host })
		if code != http.StatusForbidden {
			t.Errorf("Host %s through the forward: %d, want 403", host, code)
		}
	}
	// A loopback name on the forward's port, without the token: the
	// token is still the credential.
	if code, _ := do(t, "GET", "http://localhost:"+local+"/api/questions", "", "", nil); code != http.StatusUnauthorized {
		t.Errorf("no token through the forward: %d, want 401", code)
	}

	page := webtest.OpenPage(t, d.browser, 2*time.Minute)
	defer page.Close()
	page.Do(chromedp.Navigate(viaForward))
	page.Poll("flow graph nodes", `document.querySelectorAll(".flow-graph .graph-node").length >= 2`)
	if got := page.Eval(`location.href`); !regexp.MustCompile(`^http://localhost:` + local + `/s/[0-9a-f]{32}/$`).MatchString(got) {
		t.Errorf("address bar %q, want the forward's port under the prefix, without the token", got)
	}
	d.answerInBrowser(t, page)
}
