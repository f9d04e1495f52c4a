package provider

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/fakellm"
)

func TestCheckBaseURL(t *testing.T) {
	ok := []string{"http://127.0.0.1:8080/v1", "https://api.openai.com/v1", "http://[::1]:11434/v1", "http://localhost:1234/v1/", " http://h/v1 "}
	for _, v := range ok {
		if err := CheckBaseURL(v); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	bad := map[string]string{
		"notaurl":                      "is not a URL: it needs http:// or https:// and a host",
		"127.0.0.1:8080":               "is not a URL: it needs http://",
		"localhost:8080/v1":            "is not a URL: it needs http://",
		"ftp://host/v1":                "uses ftp:, but model servers speak http: or https:",
		"http:///v1":                   "has no host",
		"http://:8080/v1":              "has no host",
		"http://h:99999/v1":            `has port "99999"`,
		"http://h:0/v1":                `has port "0"`,
		"http://h/v1?key=x":            "carries a query or a fragment",
		"http://h/v1#x":                "carries a query or a fragment",
		"http://h /v1":                 "is not a URL (",
		"":                             "is empty",
		"http://user:hunter2@h:99/v1?": "carries a query",
	}
	for v, want := range bad {
		err := CheckBaseURL(v)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "such as http://127.0.0.1:8080/v1") {
			t.Errorf("%q: %v, want it to say %q and the fix", v, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the message repeats the URL's password: %v", v, err)
		}
	}
}

// failures made by the real client against loopback, so the
// classification is the one a user's run gets.
func realFailure(t *testing.T, base string) error {
	t.Helper()
	_, err := NewOpenAIChat(Config{BaseURL: base}).(Prober).Probe(context.Background())
	if err == nil {
		t.Fatalf("probe of %s succeeded", base)
	}
	return err
}

func statusServer(t *testing.T, status int, body string) string {
	t.Helper()
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	})
	return f.URL
}

func TestUnansweredExplainsTheLikelyCause(t *testing.T) {
	closed := fakellm.RefusedURL(t)
	at := func(base string, keySent bool) Endpoint {
		return Endpoint{Provider: "openai", BaseURL: base, ModelsURL: base + "/models", CallURL: base + "/chat/completions", KeySent: keySent}
	}
	noV1 := statusServer(t, 404, "404 page not found")
	withV1 := statusServer(t, 404, `{"error":"not found"}`) + "/v1"
	unauthorized := statusServer(t, 401, `{"error":{"message":"Invalid API key SECRET-BODY"}}`) + "/v1"
	loading := statusServer(t, 503, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`) + "/v1"
	cases := []struct {
		name string
		u    Unanswered
		want []string
	}{
		{"nothing listening on loopback", Unanswered{Endpoint: at(closed, false), Probe: realFailure(t, closed)},
			[]string{"GET " + closed + "/models: connection refused", "the first model call was not tried", "Likely cause: nothing listens on 127.0.0.1:", "llama-server -m MODEL.gguf --jinja"}},
		{"the URL lacks /v1", Unanswered{Endpoint: at(noV1, false), Probe: realFailure(t, noV1), Call: ClassifyHTTP(404, nil, []byte("404 page not found"))},
			[]string{"GET " + noV1 + "/models: HTTP 404", "POST " + noV1 + "/chat/completions: HTTP 404", "the URL lacks /v1", "try --base-url " + noV1 + "/v1"}},
		{"a wrong path under /v1", Unanswered{Endpoint: at(withV1, false), Probe: realFailure(t, withV1)},
			[]string{"HTTP 404", "not at this path"}},
		{"no key sent", Unanswered{Endpoint: at(unauthorized, false), Probe: realFailure(t, unauthorized)},
			[]string{"HTTP 401 (auth)", "wants a key and none was sent: set OPENAI_API_KEY"}},
		{"no key sent because the workspace chose the endpoint", Unanswered{Endpoint: at(unauthorized, false), Probe: realFailure(t, unauthorized), KeyNote: "the workspace's deployment.json chose it"},
			[]string{"none was sent: the workspace's deployment.json chose it"}},
		{"a refused key", Unanswered{Endpoint: at(unauthorized, true), Probe: realFailure(t, unauthorized)},
			[]string{"the server refused the key"}},
		{"a server still loading", Unanswered{Endpoint: at(loading, false), Probe: realFailure(t, loading)},
			[]string{"HTTP 503 (server)", "reports an error (HTTP 503)", "503 for a while"}},
		{"Ollama's port", Unanswered{Endpoint: at("http://127.0.0.1:11434/v1", false), Probe: refused()},
			[]string{"nothing listens on 127.0.0.1:11434: start Ollama"}},
		{"a name that does not resolve", Unanswered{Endpoint: at("http://gpu-box.lan:8080/v1", false),
			Probe: &Error{Category: CategoryNetwork, Err: &net.OpError{Op: "dial", Err: &net.DNSError{Name: "gpu-box.lan", Err: "no such host", IsNotFound: true}}}},
			[]string{"the host name does not resolve", "gpu-box.lan does not resolve"}},
		{"no answer in time", Unanswered{Endpoint: at("http://10.9.9.9:8080/v1", false), Probe: &Error{Category: CategoryTimeout, Err: context.DeadlineExceeded}},
			[]string{"no answer in time", "a firewall, a wrong host"}},
		{"anthropic", Unanswered{Endpoint: Endpoint{Provider: "anthropic", BaseURL: "https://api.anthropic.com", ModelsURL: "https://api.anthropic.com/v1/models", CallURL: "https://api.anthropic.com/v1/messages"},
			Probe: ClassifyHTTP(401, nil, nil)}, []string{"ANTHROPIC_API_KEY"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := c.u.Explain()
			for _, w := range append(c.want, "never answered", "Usual causes:", "--jinja", "11434", "num_ctx", "/v1") {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, "SECRET-BODY") || strings.Contains(msg, "Loading model") {
				t.Errorf("the message quotes the provider's body:\n%s", msg)
			}
		})
	}
}

// refused is a real connection-refused failure (port 1 on loopback), for a
// port this test cannot own.
func refused() error {
	d := net.Dialer{}
	_, err := d.DialContext(context.Background(), "tcp", "127.0.0.1:1")
	if err == nil {
		return &Error{Category: CategoryNetwork, Err: &net.OpError{Op: "dial", Net: "tcp"}}
	}
	return &Error{Category: CategoryNetwork, Err: err}
}

func TestEndpointNeverCarriesCredentials(t *testing.T) {
	for _, p := range []Provider{
		NewOpenAIChat(Config{BaseURL: "http://user:hunter2@127.0.0.1:8080/v1", APIKey: "sk-x"}),
		NewOpenAIResponses(Config{BaseURL: "http://user:hunter2@127.0.0.1:8080/v1"}),
		NewAnthropic(Config{BaseURL: "https://user:hunter2@proxy.example"}),
	} {
		e := p.(Described).Endpoint()
		all := e.BaseURL + e.ModelsURL + e.CallURL
		if strings.Contains(all, "hunter2") || strings.Contains(all, "user") || !strings.Contains(e.CallURL, "/") {
			t.Errorf("%s: endpoint %+v", p.Name(), e)
		}
		if msg := (Unanswered{Endpoint: e, Probe: ClassifyHTTP(500, nil, nil)}).Explain(); strings.Contains(msg, "hunter2") || strings.Contains(msg, "sk-x") {
			t.Errorf("%s: message carries a credential: %s", p.Name(), msg)
		}
	}
}
