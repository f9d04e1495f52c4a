package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestWebSearchWorkspaceEndpointObeysEgress: an endpoint the workspace's
// deployment chose is a destination like any fetch_url target. With the
// network off the query never leaves (the secret in it reaches nobody),
// the refusal is an egress event and a permission_denied result naming
// the setting; allowed by the address itself it is reached; a name that
// resolves to loopback is refused at the dialer; and the operator's own
// endpoint is still reached directly.
func TestWebSearchWorkspaceEndpointObeysEgress(t *testing.T) {
	var queries []string
	srv := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.Query().Get("q"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"results":[{"title":"hit","url":"https://example.org/","content":"x"}]}`)
	})
	const secret = "DB_PASSWORD=hunter2-77"
	query := map[string]any{"query": "config " + secret}
	port := srv.port()
	n := newWebNet(t, map[string]string{"search.example": "127.0.0.1"})
	tool := webSearch{resolver: n, dial: n.dial}

	cases := []struct {
		name     string
		endpoint string
		allow    []string
		ws       bool
		// want is "" for a search that gets its results, else what the
		// permission_denied message must say.
		want string
	}{
		{"workspace endpoint, network off", srv.URL, nil, true, "not on the sandbox's network allowlist"},
		{"workspace endpoint, another host allowed", srv.URL, []string{"example.org"}, true, "not on the sandbox's network allowlist"},
		{"workspace endpoint allowed by its address", srv.URL, []string{"127.0.0.1:" + port}, true, ""},
		{"workspace name that resolves to loopback", "http://search.example:" + port, []string{"search.example"}, true, "resolves to 127.0.0.1"},
		{"operator's endpoint, network off", srv.URL, nil, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			queries = nil
			env := newWebEnv(t, c.allow...)
			res := searchCall(t, tool, env, WebSearchConfig{Provider: "searxng", Endpoint: c.endpoint, FromWorkspace: c.ws}, query)
			if c.want == "" {
				if a := answer(t, res); len(a.Results) != 1 || len(queries) != 1 {
					t.Fatalf("results %+v, %d queries arrived", a.Results, len(queries))
				}
				return
			}
			if res.Kind != KindPermissionDenied || !strings.Contains(res.Message, c.want) || !strings.Contains(res.Message, `"allowlist"`) ||
				!strings.Contains(res.Message, "workspace's deployment file chose") || !strings.Contains(res.Message, "query was not sent") {
				t.Fatalf("result %s %q", res.Kind, res.Message)
			}
			if len(queries) != 0 {
				t.Fatalf("the query reached the endpoint: %q", queries)
			}
			denials := env.denials()
			if len(denials) != 1 || denials[0].Via != "web_search" || !strings.Contains(denials[0].Reason, c.want) {
				t.Fatalf("egress denials %+v", denials)
			}
			if b, _ := json.Marshal(res); strings.Contains(string(b), secret) {
				t.Errorf("the refusal quotes the query: %s", b)
			}
		})
	}
}

// A workspace that turns Kagi on does not thereby send the operator's
// key and queries to Kagi past a network that is off: the fixed endpoint
// is a destination like any other, and the embedder's transport is not
// used for it.
func TestWebSearchWorkspaceKagiObeysEgress(t *testing.T) {
	hits := 0
	fake := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer fake.Close()
	tool := NewWebSearch(toKagi{t: t, fake: fake})
	env := newWebEnv(t)
	res := searchCall(t, tool, env, WebSearchConfig{Provider: "kagi", Key: testKagiKey, FromWorkspace: true}, map[string]any{"query": "q"})
	if res.Kind != KindPermissionDenied || !strings.Contains(res.Message, "kagi.com:443") || hits != 0 {
		t.Fatalf("result %s %q, %d requests", res.Kind, res.Message, hits)
	}
	if d := env.denials(); len(d) != 1 || d[0].Host != "kagi.com" {
		t.Fatalf("denials %+v", d)
	}
	if strings.Contains(res.Message, testKagiKey) {
		t.Fatal("the refusal shows the key")
	}
}
