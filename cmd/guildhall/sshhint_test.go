package main

import (
	"errors"
	"testing"
)

func TestSSHForwardHint(t *testing.T) {
	host := func() (string, error) { return "build-box", nil }
	noHost := func() (string, error) { return "", errors.New("no name") }
	const u = "http://127.0.0.1:8777/?token=abc"
	for _, tc := range []struct {
		name, url, conn, user string
		hostname              func() (string, error)
		want                  string
	}{
		{"not over SSH", u, "", "alice", host, ""},
		{"the server address", u, "203.0.113.9 51234 198.51.100.7 22", "alice", host,
			"  over SSH, run on your machine: ssh -L 8777:127.0.0.1:8777 alice@198.51.100.7  (then open the URL above; docs/ssh.md)"},
		{"a wildcard bind forwards to loopback", "http://127.0.0.1:9000/?token=x", "203.0.113.9 51234 198.51.100.7 22", "bob", host,
			"  over SSH, run on your machine: ssh -L 9000:127.0.0.1:9000 bob@198.51.100.7  (then open the URL above; docs/ssh.md)"},
		{"a bound address is the target", "http://10.0.0.5:9000/?token=x", "203.0.113.9 51234 10.0.0.5 22", "bob", host,
			"  over SSH, run on your machine: ssh -L 9000:10.0.0.5:9000 bob@10.0.0.5  (then open the URL above; docs/ssh.md)"},
		{"IPv6 server address", u, "2001:db8::1 51234 2001:db8::2 22", "alice", host,
			"  over SSH, run on your machine: ssh -L 8777:127.0.0.1:8777 alice@2001:db8::2  (then open the URL above; docs/ssh.md)"},
		{"a broken variable falls back to the hostname", u, "garbage", "alice", host,
			"  over SSH, run on your machine: ssh -L 8777:127.0.0.1:8777 alice@build-box  (then open the URL above; docs/ssh.md)"},
		{"no user", u, "203.0.113.9 51234 198.51.100.7 22", "", host,
			"  over SSH, run on your machine: ssh -L 8777:127.0.0.1:8777 198.51.100.7  (then open the URL above; docs/ssh.md)"},
		{"a hostile user name is not printed", u, "203.0.113.9 51234 198.51.100.7 22", "x; rm -rf ~ \x1b[2J", host,
			"  over SSH, run on your machine: ssh -L 8777:127.0.0.1:8777 198.51.100.7  (then open the URL above; docs/ssh.md)"},
		{"no address, no hostname", u, "garbage", "alice", noHost,
			"  over SSH, run on your machine: ssh -L 8777:127.0.0.1:8777 alice@HOST  (then open the URL above; docs/ssh.md)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"SSH_CONNECTION": tc.conn, "USER": tc.user}
			got := sshForwardHint(tc.url, func(k string) string { return env[k] }, tc.hostname)
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
