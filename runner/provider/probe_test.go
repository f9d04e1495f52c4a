package provider

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
)

// routes answers by path; anything else is a 404 like the real servers.
func routes(m map[string]string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := m[r.Method+" "+r.URL.Path]
		if !ok {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "404 page not found")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

const llamaModels = `{"models":[{"name":"qwen3-8b-q4_k_m.gguf","model":"qwen3-8b-q4_k_m.gguf","type":"model","capabilities":["completion"]}],"object":"list","data":[{"id":"qwen3-8b-q4_k_m.gguf","object":"model","created":1735000000,"owned_by":"llamacpp","meta":{"vocab_type":2,"n_vocab":151936,"n_ctx_train":40960,"n_embd":4096,"n_params":8190735360,"size":5027783680}}]}`

const llamaProps = `{"default_generation_settings":{"id":0,"id_task":-1,"n_ctx":8192,"speculative":false,"is_processing":false,"params":{"n_predict":-1,"temperature":0.8}},"total_slots":1,"model_path":"/models/qwen3-8b-q4_k_m.gguf","chat_template":"...","build_info":"b6123-abc"}`

func probe(t *testing.T, p Provider) []ModelInfo {
	t.Helper()
	pr, ok := p.(Prober)
	if !ok {
		t.Fatalf("%s does not implement Prober", p.Name())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ms, err := pr.Probe(ctx)
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	return ms
}

func TestProbeLlamaCppPrefersServerContext(t *testing.T) {
	f := newFake(t, routes(map[string]string{"GET /v1/models": llamaModels, "GET /props": llamaProps}))
	got := probe(t, NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}))
	want := []ModelInfo{{ID: "qwen3-8b-q4_k_m.gguf", ContextWindow: 8192}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if h := f.last(t).Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization without key: %q", h)
	}
}

func TestProbeLlamaCppWithoutPropsUsesTrainingContext(t *testing.T) {
	f := newFake(t, routes(map[string]string{"GET /v1/models": llamaModels}))
	got := probe(t, NewOpenAIResponses(Config{BaseURL: f.URL + "/v1", APIKey: "secret"}))
	if len(got) != 1 || got[0].ContextWindow != 40960 {
		t.Errorf("got %+v", got)
	}
	for _, r := range f.requests() {
		if r.Header.Get("Authorization") != "Bearer secret" {
			t.Errorf("%s sent without the key", r.Path)
		}
	}
}

func TestProbePropsWhenListHasNoWindow(t *testing.T) {
	// An older llama.cpp build: bare OpenAI list, window only in /props.
	f := newFake(t, routes(map[string]string{
		"GET /v1/models": `{"object":"list","data":[{"id":"model.gguf","object":"model","created":1,"owned_by":"me"}]}`,
		"GET /props":     `{"default_generation_settings":{"n_ctx":4096},"total_slots":1}`,
	}))
	got := probe(t, NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}))
	if len(got) != 1 || got[0].ContextWindow != 4096 {
		t.Errorf("got %+v", got)
	}
}

func TestProbeOllama(t *testing.T) {
	list := `{"object":"list","data":[{"id":"qwen3:8b","object":"model","created":1735000000,"owned_by":"library"},{"id":"llama3.2:latest","object":"model","created":1735000000,"owned_by":"library"}]}`
	show := `{"license":"...","modelfile":"# Modelfile","parameters":"temperature 0.6\ntop_k 20","template":"{{ .Prompt }}","details":{"format":"gguf","family":"qwen3","parameter_size":"8.2B","quantization_level":"Q4_K_M"},"model_info":{"general.architecture":"qwen3","general.parameter_count":8190735360,"qwen3.context_length":40960,"qwen3.embedding_length":4096},"capabilities":["completion","tools","thinking"]}`

	t.Run("show model_info", func(t *testing.T) {
		f := newFake(t, routes(map[string]string{"GET /v1/models": list, "GET /api/ps": `{"models":[]}`, "POST /api/show": show}))
		got := probe(t, NewOpenAIChat(Config{BaseURL: f.URL + "/v1", Model: "qwen3:8b"}))
		want := []ModelInfo{{ID: "qwen3:8b", ContextWindow: 40960}, {ID: "llama3.2:latest"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
		var sawShow bool
		for _, r := range f.requests() {
			if r.Path == "/api/show" {
				sawShow = true
				if r.json(t)["model"] != "qwen3:8b" {
					t.Errorf("show body = %s", r.Body)
				}
			}
		}
		if !sawShow {
			t.Error("no /api/show request")
		}
	})
	t.Run("num_ctx parameter wins", func(t *testing.T) {
		withCtx := `{"parameters":"num_ctx 16384\ntemperature 0.6","model_info":{"general.architecture":"qwen3","qwen3.context_length":40960}}`
		f := newFake(t, routes(map[string]string{"GET /v1/models": list, "POST /api/show": withCtx}))
		got := probe(t, NewOpenAIChat(Config{BaseURL: f.URL + "/v1", Model: "qwen3:8b"}))
		if got[0].ContextWindow != 16384 {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("loaded model from ps", func(t *testing.T) {
		ps := `{"models":[{"name":"llama3.2:latest","model":"llama3.2:latest","size":3000000000,"digest":"a80c","expires_at":"2025-06-01T12:00:00Z","size_vram":3000000000,"context_length":8192}]}`
		f := newFake(t, routes(map[string]string{"GET /v1/models": list, "GET /api/ps": ps, "POST /api/show": show}))
		got := probe(t, NewOpenAIChat(Config{BaseURL: f.URL + "/v1", Model: "llama3.2"}))
		if got[1].ID != "llama3.2:latest" || got[1].ContextWindow != 8192 {
			t.Errorf("got %+v", got)
		}
	})
}

func TestProbeReportedWindowFields(t *testing.T) {
	cases := map[string]string{
		"vllm":       `{"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","created":1,"owned_by":"vllm","root":"Qwen/Qwen3-8B","parent":null,"max_model_len":32768,"permission":[]}]}`,
		"openrouter": `{"data":[{"id":"qwen/qwen3-8b","name":"Qwen: Qwen3 8B","context_length":32768,"pricing":{"prompt":"0"}}]}`,
		"lm studio":  `{"object":"list","data":[{"id":"qwen3-8b","object":"model","type":"llm","max_context_length":131072,"loaded_context_length":32768}]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, routes(map[string]string{"GET /v1/models": body}))
			got := probe(t, NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}))
			if len(got) != 1 || got[0].ContextWindow != 32768 {
				t.Errorf("got %+v", got)
			}
			if n := len(f.requests()); n != 1 {
				t.Errorf("%d requests; a reported window needs no extra probes", n)
			}
		})
	}
}

func TestProbeAnthropic(t *testing.T) {
	f := newFake(t, routes(map[string]string{"GET /v1/models": `{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z","max_input_tokens":200000,"max_tokens":64000}],"has_more":false,"first_id":"claude-sonnet-4-5","last_id":"claude-sonnet-4-5"}`}))
	got := probe(t, NewAnthropic(Config{BaseURL: f.URL, APIKey: "sk-ant"}))
	if !reflect.DeepEqual(got, []ModelInfo{{ID: "claude-sonnet-4-5", ContextWindow: 200000}}) {
		t.Errorf("got %+v", got)
	}
	if r := f.last(t); r.Header.Get("X-Api-Key") != "sk-ant" || r.Header.Get("Anthropic-Version") == "" {
		t.Errorf("headers %v", r.Header)
	}
}

func TestProbeFailures(t *testing.T) {
	t.Run("401", func(t *testing.T) {
		f := newFake(t, statusHandler(401, nil, `{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`))
		_, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).(Prober).Probe(context.Background())
		if e := AsError(err); e == nil || e.Category != CategoryAuth {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		_, err := NewOpenAIChat(Config{BaseURL: fakellm.RefusedURL(t)}).(Prober).Probe(context.Background())
		if e := AsError(err); e == nil || e.Category != CategoryNetwork {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("hanging", func(t *testing.T) {
		f := newFake(t, hangHandler)
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		_, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).(Prober).Probe(ctx)
		if e := AsError(err); e == nil || e.Category != CategoryTimeout {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("not a model list", func(t *testing.T) {
		f := newFake(t, statusHandler(200, nil, "<html>hello</html>"))
		_, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).(Prober).Probe(context.Background())
		if e := AsError(err); e == nil || e.Category != CategoryMalformed {
			t.Errorf("err = %v", err)
		}
	})
}
