package provider

// First contact: checking an endpoint's URL before it is used, and telling
// the operator, when it never answered, what was tried and what usually
// causes that. A wrong URL, a server that is not running, a missing /v1 or a
// refused key is a setup problem to fix now, not an outage to wait out.

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Endpoint says where a provider sends its requests, for messages. It never
// carries the key, only whether one is sent.
type Endpoint struct {
	// Provider is the wire format: openai, openai-responses or anthropic.
	Provider string
	// BaseURL is the configured base, without user information.
	BaseURL string
	// ModelsURL is the model list the probe reads; CallURL the path of a
	// model call.
	ModelsURL, CallURL string
	// KeySent is set when the provider sends a key.
	KeySent bool
}

// Described is implemented by the network providers.
type Described interface {
	Endpoint() Endpoint
}

func (p *openAIChat) Endpoint() Endpoint {
	return endpointAt("openai", p.base, "/models", "/chat/completions", p.cfg)
}

func (p *openAIResponses) Endpoint() Endpoint {
	return endpointAt("openai-responses", p.base, "/models", "/responses", p.cfg)
}

func (p *anthropicProvider) Endpoint() Endpoint {
	return endpointAt("anthropic", p.root, "/v1/models", "/v1/messages", p.cfg)
}

// endpointAt is the Endpoint of a provider whose probe and calls go to
// the paths models and call below base.
func endpointAt(provider, base, models, call string, cfg Config) Endpoint {
	base = RedactURL(base)
	return Endpoint{Provider: provider, BaseURL: base, ModelsURL: base + models, CallURL: base + call, KeySent: cfg.APIKey != ""}
}

// RedactURL drops a URL's user information, which can hold a password,
// for a URL that is shown or recorded.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// CheckBaseURL reports what is wrong with a base URL before anything is
// sent to it: it must be an absolute http or https URL with a host and a
// valid port, and nothing after the path. The error quotes the value and
// says what to give instead.
func CheckBaseURL(raw string) error {
	v := strings.TrimSpace(raw)
	const fix = "give the server's API base, such as http://127.0.0.1:8080/v1"
	if v == "" {
		return errors.New("is empty; " + fix)
	}
	u, err := url.Parse(v)
	var problem string
	switch {
	case !strings.Contains(v, "://"):
		problem = "is not a URL: it needs http:// or https:// and a host"
	case err != nil:
		problem = fmt.Sprintf("is not a URL (%v)", unwrapURLError(err))
	case u.Scheme == "" || u.Opaque != "" || u.Host == "" && !strings.Contains(v, "//"):
		problem = "is not a URL: it needs http:// or https:// and a host"
	case u.Scheme != "http" && u.Scheme != "https":
		problem = fmt.Sprintf("uses %s:, but model servers speak http: or https:", u.Scheme)
	case u.Hostname() == "":
		problem = "has no host"
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		problem = "carries a query or a fragment"
	case u.Port() != "" && !validPort(u.Port()):
		problem = fmt.Sprintf("has port %q, which is not a port number (1–65535)", u.Port())
	default:
		return nil
	}
	return fmt.Errorf("%q %s; %s", userInfo().ReplaceAllString(v, "${1}…@"), problem, fix)
}

// userInfo matches the user information of a URL, which can hold a
// password, so that a message never repeats it.
var userInfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@`) })

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Unanswered is an endpoint that never answered: where, and how each try
// failed. Probe is the model list (GET …/models) at start, Call the first
// model call; either is nil when it was not tried or did not fail.
type Unanswered struct {
	Endpoint Endpoint
	Probe    error
	Call     error
	// KeyNote, when set, says why no key was sent (the workspace chose the
	// endpoint).
	KeyNote string
}

// Explain is the operator's message: the URL, what was tried and how it
// failed, the likely cause first, then the usual causes. It quotes no
// provider body: only statuses and this machine's own error text.
func (u Unanswered) Explain() string {
	e := u.Endpoint
	var b strings.Builder
	fmt.Fprintf(&b, "the model endpoint %s (%s) never answered.\n", e.BaseURL, e.Provider)
	if u.Probe != nil {
		fmt.Fprintf(&b, "  tried GET %s: %s\n", e.ModelsURL, failureText(u.Probe))
	}
	if u.Call != nil {
		fmt.Fprintf(&b, "  tried the first model call, POST %s: %s\n", e.CallURL, failureText(u.Call))
	} else if u.Probe != nil {
		b.WriteString("  the first model call was not tried: the server did not answer the model list\n")
	}
	if hint := u.likelyCause(); hint != "" {
		b.WriteString("Likely cause: " + hint + "\n")
	}
	b.WriteString("Usual causes:\n")
	for _, c := range usualCauses(e) {
		b.WriteString("  - " + c + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// failureText is a failure as one line: the category, the status and this
// machine's error text (a server's own message is on the run's
// provider_failure events, not here).
func failureText(err error) string {
	pe := AsError(err)
	if pe == nil {
		return oneLine(err.Error())
	}
	switch {
	case pe.StatusCode != 0:
		return fmt.Sprintf("HTTP %d (%s)", pe.StatusCode, pe.Category)
	case isRefused(pe):
		return "connection refused: nothing is listening there"
	case isDNS(pe):
		return "the host name does not resolve"
	case pe.Category == CategoryTimeout:
		return "no answer in time"
	}
	return fmt.Sprintf("%s: %s", pe.Category, oneLine(innerText(pe)))
}

// innerText is a failure's own text without the SDK's wrapping of the
// request line (which repeats the URL).
func innerText(pe *Error) string {
	var ue *url.Error
	if errors.As(pe.Err, &ue) {
		return ue.Err.Error()
	}
	if pe.Err == nil {
		return string(pe.Category)
	}
	return pe.Err.Error()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = clip(s, 200)
	}
	return s
}

func isRefused(pe *Error) bool { return errors.Is(pe.Err, syscall.ECONNREFUSED) }

func isDNS(pe *Error) bool {
	var de *net.DNSError
	return errors.As(pe.Err, &de)
}

// status is the HTTP status of the first failure that has one.
func (u Unanswered) status() int {
	for _, err := range []error{u.Call, u.Probe} {
		if pe := AsError(err); pe != nil && pe.StatusCode != 0 {
			return pe.StatusCode
		}
	}
	return 0
}

func (u Unanswered) failed(match func(*Error) bool) bool {
	for _, err := range []error{u.Call, u.Probe} {
		if pe := AsError(err); pe != nil && match(pe) {
			return true
		}
	}
	return false
}

// likelyCause picks the hint the failures point to.
func (u Unanswered) likelyCause() string {
	e := u.Endpoint
	host, port := hostPort(e.BaseURL)
	switch st := u.status(); {
	case st == 401 || st == 403:
		if !e.KeySent {
			if u.KeyNote != "" {
				return "the server wants a key and none was sent: " + u.KeyNote
			}
			return "the server wants a key and none was sent: set " + keyVars(e.Provider) + "."
		}
		return "the server refused the key: check " + keyVars(e.Provider) + " (a key for another provider or an expired one is refused)."
	case st == 404 && e.Provider != "anthropic" && !strings.HasSuffix(strings.TrimRight(e.BaseURL, "/"), "/v1"):
		return "the URL lacks /v1: OpenAI-compatible servers answer under it; try --base-url " + strings.TrimRight(e.BaseURL, "/") + "/v1"
	case st == 404:
		return "the server answered, but not at this path: check the base URL (and --provider: " + e.Provider + " expects " + pathOf(e.CallURL) + ")."
	case st >= 500:
		return fmt.Sprintf("the server is there but reports an error (HTTP %d): look at its own log; a server still loading its model answers 503 for a while.", st)
	case u.failed(isRefused) && port == "11434":
		return "nothing listens on " + host + ":11434: start Ollama (`ollama serve`)."
	case u.failed(isRefused) && isLoopback(host):
		return "nothing listens on " + host + ":" + port + ": start the model server, e.g. `llama-server -m MODEL.gguf --jinja -c 16384 --port " + port + "`."
	case u.failed(isRefused):
		return "nothing listens on " + host + ":" + port + ": check the host and port, and that the server listens beyond its own loopback."
	case u.failed(isDNS):
		return "the host name " + host + " does not resolve: check it for typos."
	case u.failed(func(pe *Error) bool { return pe.Category == CategoryTimeout }):
		return "nothing answered in time: a firewall, a wrong host, or a server too busy to answer."
	case u.failed(func(pe *Error) bool { return pe.Category == CategoryMalformed }):
		return "the answer was not an OpenAI-compatible reply: is this the model server, and is --provider (" + e.Provider + ") its API?"
	}
	return ""
}

func usualCauses(e Endpoint) []string {
	causes := []string{
		"the server is not running: llama.cpp is `llama-server -m MODEL.gguf --jinja -c 16384 --port 8080` (`--jinja` is needed for tool calls), then --base-url http://127.0.0.1:8080/v1",
		"Ollama serves its OpenAI API on port 11434: --base-url http://127.0.0.1:11434/v1; use a tool-capable model and raise its small default num_ctx (OLLAMA_CONTEXT_LENGTH=16384)",
		"the URL lacks /v1: OpenAI-compatible servers (llama.cpp, Ollama, vLLM, LM Studio) answer under http://HOST:PORT/v1",
		"a wrong or missing key: " + keyVars(e.Provider) + " (local servers need none)",
	}
	return causes
}

func keyVars(provider string) string {
	if provider == "anthropic" {
		return "ANTHROPIC_API_KEY (or GUILDHALL_API_KEY)"
	}
	return "OPENAI_API_KEY (or GUILDHALL_API_KEY)"
}

func hostPort(raw string) (string, string) {
	u, err := url.Parse(raw)
	if err != nil {
		return raw, ""
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Hostname(), port
}

func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Path
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
