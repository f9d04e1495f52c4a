package main

// The browser console is on the remote machine's loopback when Guildhall
// runs over SSH, so the printed URL is only half of the way in: this file
// adds, under $SSH_CONNECTION, the port forward to run on the operator's
// own machine (docs/ssh.md).

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
)

// printConsoleURL prints the browser console's URL and, over SSH, the
// port forward that makes it reachable from the operator's machine.
func printConsoleURL(w io.Writer, consoleURL string) {
	fmt.Fprintln(w, "browser console:", consoleURL)
	if hint := sshForwardHint(consoleURL, os.Getenv, os.Hostname); hint != "" {
		fmt.Fprintln(w, hint)
	}
}

// sshForwardHint is the second line under the URL when $SSH_CONNECTION is
// set: the exact ssh -L command to run locally. The user is $USER; the host
// is the server address of the SSH connection (its third field), else this
// machine's name. It is "" outside SSH or for a URL it cannot read.
func sshForwardHint(consoleURL string, getenv func(string) string, hostname func() (string, error)) string {
	conn := getenv("SSH_CONNECTION")
	if strings.TrimSpace(conn) == "" {
		return ""
	}
	u, err := url.Parse(consoleURL)
	if err != nil || u.Port() == "" {
		return ""
	}
	port := u.Port()
	target := u.Hostname()
	if ip := net.ParseIP(target); ip == nil || ip.IsUnspecified() || ip.IsLoopback() {
		target = "127.0.0.1"
	}
	host := ""
	if f := strings.Fields(conn); len(f) >= 3 && net.ParseIP(f[2]) != nil {
		host = f[2]
	} else if name, err := hostname(); err == nil {
		host = name
	}
	if !plainHost(host) {
		host = "HOST"
	}
	dest := host
	if user := getenv("USER"); plainHost(user) {
		dest = user + "@" + host
	}
	if strings.Contains(target, ":") {
		target = "[" + target + "]" // ssh's spelling of an IPv6 forward target
	}
	return fmt.Sprintf("  over SSH, run on your machine: ssh -L %s:%s:%s %s  (then open the URL above; docs/ssh.md)", port, target, port, dest)
}

// plainHost reports whether s is safe to print inside a command line: a
// user or host name of letters, digits and ".-_:" (no spaces, no shell or
// terminal characters from a hostile environment).
func plainHost(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_', r == ':':
		default:
			return false
		}
	}
	return true
}
