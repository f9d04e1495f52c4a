package render

import (
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
)

func TestHeadlessEgressLines(t *testing.T) {
	cases := []struct {
		p    event.EgressPayload
		want string
	}{
		{event.EgressPayload{Host: "proxy.golang.org", Port: 443, Allowed: true, Via: "proxy", RoleID: "coder-1-2"},
			"  ⇄ egress allowed: proxy.golang.org:443 (coder-1-2 via proxy)"},
		{event.EgressPayload{Host: "evil.example", Port: 80, Via: "fetch_url", RoleID: "researcher-1-3", Reason: "not on the sandbox's network allowlist"},
			"  ⛔ egress denied: evil.example:80 (researcher-1-3 via fetch_url): not on the sandbox's network allowlist"},
		{event.EgressPayload{Host: "x\x1b]52;c;cHduZWQ=\x07.example", Port: 443, Via: "proxy", Reason: "\x1b[2Jcleared"},
			"  ⛔ egress denied: x.example:443 (via proxy): cleared"},
	}
	for _, c := range cases {
		e, err := event.New(time.Now(), event.Egress, c.p)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := HeadlessLine(e)
		if !ok || got != c.want {
			t.Errorf("HeadlessLine(%+v) = %q, %v; want %q", c.p, got, ok, c.want)
		}
		if strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("control bytes in %q", got)
		}
	}
}
