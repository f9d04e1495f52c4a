package provider

// Probing: which models a server offers and, where the server says, their
// context windows. Used at start and while a run is suspended to learn when
// a provider is back.
//
// Where each server reports a window:
//   - llama.cpp: /v1/models entries carry meta.n_ctx_train (the model's
//     training context); /props at the server root carries
//     default_generation_settings.n_ctx, the context the server was started
//     with (-c), which is what actually bounds a request. /props wins when
//     it answers, because n_ctx_train overstates a server run with a smaller
//     -c.
//   - vLLM: max_model_len. OpenRouter: context_length. LM Studio:
//     loaded_context_length / max_context_length. Anthropic:
//     max_input_tokens.
//   - Ollama: nothing in /v1/models. Best effort through its native API at
//     the server root: /api/ps gives the context_length of a loaded model
//     (the real num_ctx); otherwise POST /api/show gives num_ctx from the
//     model's parameters or model_info["<arch>.context_length"] (the
//     model's maximum, which Ollama's default num_ctx may undercut).
//
// A window is 0 when no source says. Extra probes never turn a working model
// list into a failure.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

const probeReadLimit = 8 << 20

type probedModel struct {
	info  ModelInfo
	llama bool // listed with llama.cpp's meta
}

func probeOpenAICompatible(ctx context.Context, cfg Config, base string) ([]ModelInfo, error) {
	if cfg.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.RequestTimeout)
		defer cancel()
	}
	hc := cfg.httpClient()
	auth := func(r *http.Request) {
		if cfg.APIKey != "" {
			r.Header.Set("Authorization", "Bearer "+cfg.APIKey)
		}
	}
	body, err := probeGet(ctx, hc, base+"/models", auth)
	if err != nil {
		return nil, err
	}
	models, err := parseModelList(body)
	if err != nil {
		return nil, err
	}
	if isOpenAIHost(base) {
		return infos(models), nil
	}

	missing, llama := false, false
	for _, m := range models {
		missing = missing || m.info.ContextWindow == 0
		llama = llama || m.llama
	}
	if !missing && !llama {
		return infos(models), nil
	}
	root := serverRoot(base)
	if nctx := llamaPropsContext(ctx, hc, root, auth); nctx > 0 {
		for i := range models {
			if models[i].llama || models[i].info.ContextWindow == 0 {
				models[i].info.ContextWindow = nctx
			}
		}
		return infos(models), nil
	}
	if missing && cfg.Model != "" {
		if w := ollamaContext(ctx, hc, root, cfg.Model, auth); w > 0 {
			found := false
			for i := range models {
				if ollamaSameModel(models[i].info.ID, cfg.Model) {
					models[i].info.ContextWindow = w
					found = true
				}
			}
			if !found {
				models = append(models, probedModel{info: ModelInfo{ID: cfg.Model, ContextWindow: w}})
			}
		}
	}
	return infos(models), nil
}

func probeAnthropic(ctx context.Context, cfg Config, root string) ([]ModelInfo, error) {
	if cfg.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.RequestTimeout)
		defer cancel()
	}
	body, err := probeGet(ctx, cfg.httpClient(), root+"/v1/models?limit=1000", func(r *http.Request) {
		r.Header.Set("anthropic-version", "2023-06-01")
		if cfg.APIKey != "" {
			r.Header.Set("x-api-key", cfg.APIKey)
		}
	})
	if err != nil {
		return nil, err
	}
	models, err := parseModelList(body)
	if err != nil {
		return nil, err
	}
	return infos(models), nil
}

func infos(ms []probedModel) []ModelInfo {
	out := make([]ModelInfo, len(ms))
	for i, m := range ms {
		out[i] = m.info
	}
	return out
}

// probeDo sends r and returns the bounded body of a 2xx answer; any other
// outcome is a classified *Error.
func probeDo(ctx context.Context, hc *http.Client, r *http.Request) ([]byte, error) {
	resp, err := hc.Do(r)
	if err != nil {
		return nil, classifyFailure(ctx, nil, err, false)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, probeReadLimit))
	if err != nil {
		return nil, classifyFailure(ctx, nil, err, true)
	}
	if resp.StatusCode >= 300 {
		return nil, ClassifyHTTP(resp.StatusCode, resp.Header, body)
	}
	return body, nil
}

func probeGet(ctx context.Context, hc *http.Client, url string, auth func(*http.Request)) ([]byte, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, &Error{Category: CategoryBadRequest, Err: fmt.Errorf("probe %s: %w", url, err)}
	}
	r.Header.Set("Accept", "application/json")
	auth(r)
	return probeDo(ctx, hc, r)
}

// parseModelList reads {data:[{id, ...window fields}]}.
func parseModelList(body []byte) ([]probedModel, error) {
	var list struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, &Error{Category: CategoryMalformed, Body: boundBody(body), Err: fmt.Errorf("model list: %w", err)}
	}
	out := make([]probedModel, 0, len(list.Data))
	for _, entry := range list.Data {
		var id string
		_ = json.Unmarshal(entry["id"], &id)
		if id == "" {
			continue
		}
		m := probedModel{info: ModelInfo{ID: id}}
		for _, k := range []string{"loaded_context_length", "max_model_len", "context_length", "context_window", "max_context_length", "max_input_tokens"} {
			if n := jsonInt(entry[k]); n > 0 {
				m.info.ContextWindow = n
				break
			}
		}
		if raw, ok := entry["meta"]; ok {
			var meta map[string]json.RawMessage
			if json.Unmarshal(raw, &meta) == nil && meta != nil {
				m.llama = true
				if m.info.ContextWindow == 0 {
					m.info.ContextWindow = jsonInt(meta["n_ctx_train"])
				}
			}
		}
		var owner string
		_ = json.Unmarshal(entry["owned_by"], &owner)
		if owner == "llamacpp" {
			m.llama = true
		}
		out = append(out, m)
	}
	return out, nil
}

// jsonInt reads a JSON number (or numeric string); 0 otherwise.
func jsonInt(raw json.RawMessage) int {
	if len(raw) == 0 {
		return 0
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return int(f)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		n, _ := strconv.Atoi(s)
		return n
	}
	return 0
}

// llamaPropsContext asks llama.cpp's /props for the server's n_ctx; 0 when
// the server is not llama.cpp or does not say.
func llamaPropsContext(ctx context.Context, hc *http.Client, root string, auth func(*http.Request)) int {
	body, err := probeGet(ctx, hc, root+"/props", auth)
	if err != nil {
		return 0
	}
	var props struct {
		NCtx     json.RawMessage `json:"n_ctx"`
		Settings struct {
			NCtx json.RawMessage `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if json.Unmarshal(body, &props) != nil {
		return 0
	}
	if n := jsonInt(props.Settings.NCtx); n > 0 {
		return n
	}
	return jsonInt(props.NCtx)
}

func ollamaSameModel(listed, want string) bool {
	return listed == want || listed == want+":latest" || want == listed+":latest"
}

// ollamaContext asks Ollama's native API for model's context window.
func ollamaContext(ctx context.Context, hc *http.Client, root, model string, auth func(*http.Request)) int {
	if body, err := probeGet(ctx, hc, root+"/api/ps", auth); err == nil {
		var ps struct {
			Models []struct {
				Name          string          `json:"name"`
				Model         string          `json:"model"`
				ContextLength json.RawMessage `json:"context_length"`
			} `json:"models"`
		}
		if json.Unmarshal(body, &ps) == nil {
			for _, m := range ps.Models {
				if ollamaSameModel(m.Name, model) || ollamaSameModel(m.Model, model) {
					if n := jsonInt(m.ContextLength); n > 0 {
						return n
					}
				}
			}
		}
	}

	reqBody, _ := json.Marshal(map[string]string{"model": model})
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, root+"/api/show", bytes.NewReader(reqBody))
	if err != nil {
		return 0
	}
	r.Header.Set("Content-Type", "application/json")
	auth(r)
	body, err := probeDo(ctx, hc, r)
	if err != nil {
		return 0
	}
	var show struct {
		Parameters string                     `json:"parameters"`
		ModelInfo  map[string]json.RawMessage `json:"model_info"`
	}
	if json.Unmarshal(body, &show) != nil {
		return 0
	}
	for _, line := range strings.Split(show.Parameters, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	var arch string
	_ = json.Unmarshal(show.ModelInfo["general.architecture"], &arch)
	if n := jsonInt(show.ModelInfo[arch+".context_length"]); arch != "" && n > 0 {
		return n
	}
	for k, v := range show.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			if n := jsonInt(v); n > 0 {
				return n
			}
		}
	}
	return 0
}
