package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
)

// keyNames are the environment variables (and /run/secrets files, lower
// case) that may hold a provider key, in the order they are tried.
var keyNames = map[string][]string{
	"anthropic": {"ANTHROPIC_API_KEY", "GUILDHALL_API_KEY"},
	// ORCHESTRATOR_API_KEY is the original system's name for the key of
	// its (OpenAI-compatible) endpoint.
	"openai": {"OPENAI_API_KEY", "ORCHESTRATOR_API_KEY", "GUILDHALL_API_KEY"},
}

// secretEnv lists every variable whose value Guildhall holds as a secret.
var secretEnv = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GUILDHALL_API_KEY", "ORCHESTRATOR_API_KEY", "ORCHESTRATOR_KAGI_API_KEY", "KAGI_API_KEY"}

// keyring holds the provider keys, read once at start. It is handed to
// providers and to the redactor, and nowhere else.
type keyring map[string]string

// readKeys reads the keys from the environment, then Docker secrets.
func readKeys() keyring {
	k := keyring{}
	for _, n := range secretEnv {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			k[n] = v
			continue
		}
		b, err := os.ReadFile(filepath.Join("/run/secrets", strings.ToLower(n)))
		if err == nil && strings.TrimSpace(string(b)) != "" {
			k[n] = strings.TrimSpace(string(b))
		}
	}
	return k
}

// forProvider is the key sent to the provider of that name ("" for none).
func (k keyring) forProvider(provider string) string {
	names := keyNames["openai"]
	if provider == "anthropic" {
		names = keyNames["anthropic"]
	}
	for _, n := range names {
		if v := k[n]; v != "" {
			return v
		}
	}
	return ""
}

// kagi is web_search's Kagi key ("" for none), in the order the original
// reads it.
func (k keyring) kagi() string {
	for _, n := range tools.KagiKeyEnv() {
		if v := k[n]; v != "" {
			return v
		}
	}
	return ""
}

// redactor removes every held key from the records.
func (k keyring) redactor() *store.Redactor {
	values := make([]string, 0, len(k))
	for _, v := range k {
		values = append(values, v)
	}
	return store.NewRedactor(values...)
}

// takeKeys reads the keys and then removes them from the process: from
// the environment every child would inherit, and from the copy of the
// environment the kernel keeps at the top of the stack, which
// /proc/<pid>/environ shows to every process of the same user. The process
// is also made non-dumpable, so the rest of its memory is closed to them
// too. Only main calls it: it changes the whole process.
func takeKeys() keyring {
	k := readKeys()
	for _, n := range secretEnv {
		os.Unsetenv(n)
	}
	hardenProcess(secretEnv)
	return k
}
