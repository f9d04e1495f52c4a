package runner

import (
	"testing"

	"github.com/guildhall/guildhall/runner/provider"
)

// The console shows the endpoint's host only: never a path, a query or
// user information, which can carry a credential.
func TestEndpointHostShowsNoCredential(t *testing.T) {
	cases := []struct{ provider, base, want string }{
		{"openai", "http://127.0.0.1:8080/v1", "127.0.0.1:8080"},
		{"openai", "https://user:sk-secret@example.com/v1?key=sk-secret#frag", "example.com"},
		{"openai", "https://openrouter.ai/api/v1", "openrouter.ai"},
		{"openai", "", "api.openai.com"},
		{"anthropic", "", "api.anthropic.com"},
		{"openai", "http://[::1]:11434/v1", "[::1]:11434"},
		{"script", "http://127.0.0.1:8080/v1", ""},
		{"openai", "not a url with spaces", ""},
		{"openai", "://", ""},
	}
	for _, c := range cases {
		if got := endpointHost(c.provider, c.base); got != c.want {
			t.Errorf("endpointHost(%q, %q) = %q, want %q", c.provider, c.base, got, c.want)
		}
	}
}

func TestModelInfoCarriesWindowAndPrice(t *testing.T) {
	d := parseDeployment(t, `{"model": {"name": "qwen", "apiBase": "http://10.0.0.2:8000/v1", "contextWindow": 16384,
		"price": {"input": 0.5, "output": 1.5, "currency": "EUR"}}}`)
	s := &Session{cfg: SessionConfig{Deployment: d}}
	mi := s.ModelInfo()
	if mi.Name != "qwen" || mi.Host != "10.0.0.2:8000" || mi.ContextWindow != 16384 || mi.Price == nil || mi.Price.Output != 1.5 || mi.Price.Currency != "EUR" {
		t.Fatalf("model info %+v", mi)
	}
	mi.Price.Input = 99 // a copy: the deployment is not changed through it
	if d.Model.Price.Input != 0.5 {
		t.Fatal("ModelInfo shares the deployment's price")
	}
}

// TestModelInfoFollowsReconfigure: the console's endpoint settings (e)
// replace the deployment, and the footer's model @ host is read from it.
func TestModelInfoFollowsReconfigure(t *testing.T) {
	d := parseDeployment(t, `{"model": {"name": "qwen", "apiBase": "http://10.0.0.2:8000/v1"}}`)
	s := &Session{cfg: SessionConfig{Deployment: d}}
	next := *d
	next.Model.APIBase, next.Model.Name = "http://10.0.0.9:8081/v1", "llama"
	if err := s.Reconfigure(Endpoint{Deployment: &next, Provider: provider.NewScripted(&provider.Script{}, 0)}); err != nil {
		t.Fatal(err)
	}
	if mi := s.ModelInfo(); mi.Host != "10.0.0.9:8081" || mi.Name != "llama" {
		t.Fatalf("after Reconfigure, model info %+v, want llama @ 10.0.0.9:8081", mi)
	}
}
