package mcp

// Operators write MCP configuration as other clients take it: a token as
// "${GITHUB_TOKEN}", a port as "${PORT:-8080}". This file expands those
// references from the operator's environment, in the operator's own
// servers only: a workspace's server is never expanded (its text stays
// as written), so a workspace cannot name a variable of the operator's
// and have its value sent to a program or an endpoint it chose.

import (
	"fmt"
	"strings"
)

// Expanded is c with ${VAR} and ${VAR:-default} expanded from lookup in
// its env and header values, its args and its URL. A variable that is not
// set (and has no default) is an error naming it, as is a malformed
// reference; "$$" is a literal "$". Every value a variable supplied is
// kept as a secret of c (Secrets), since the environment holds tokens, and
// the summary keeps showing the args and URL as written.
//
// A server a workspace's file declared (FromWorkspace) is returned as it
// is: nothing of the operator's environment reaches it.
func (c Config) Expanded(lookup func(string) (string, bool)) (Config, error) {
	if c.FromWorkspace {
		return c, nil
	}
	out := c
	var secrets []string
	expand := func(where, s string) (string, error) {
		v, used, err := expandRefs(s, lookup)
		if err != nil {
			return "", fmt.Errorf("%s: %w", where, err)
		}
		secrets = append(secrets, used...)
		return v, nil
	}
	var err error
	if c.Env != nil {
		out.Env = make(map[string]string, len(c.Env))
		for _, k := range Names(c.Env) {
			if out.Env[k], err = expand("env."+k, c.Env[k]); err != nil {
				return c, err
			}
		}
	}
	if c.Headers != nil {
		out.Headers = make(map[string]string, len(c.Headers))
		for _, k := range Names(c.Headers) {
			if out.Headers[k], err = expand("headers."+k, c.Headers[k]); err != nil {
				return c, err
			}
		}
	}
	if c.Args != nil {
		out.Args = make([]string, len(c.Args))
		for i, a := range c.Args {
			if out.Args[i], err = expand(fmt.Sprintf("args[%d]", i), a); err != nil {
				return c, err
			}
		}
	}
	if out.URL, err = expand("url", c.URL); err != nil {
		return c, err
	}
	// What a variable put in must still be a valid value there.
	for _, k := range Names(out.Headers) {
		if strings.ContainsAny(out.Headers[k], "\r\n\x00") {
			return c, fmt.Errorf("headers.%s: the value from your environment holds a line break or NUL", k)
		}
	}
	for _, k := range Names(out.Env) {
		if strings.ContainsRune(out.Env[k], 0) {
			return c, fmt.Errorf("env.%s: the value from your environment holds a NUL", k)
		}
	}
	if out.URL != c.URL && out.Transport() == HTTP {
		if msg := urlProblem(out.URL); msg != "" {
			return c, fmt.Errorf("url, expanded from your environment, %s", msg)
		}
	}
	if len(secrets) > 0 {
		out.expandedSecrets = secrets
		out.written = &written{args: c.Args, url: c.URL}
	}
	return out, nil
}

// written is a server's args and URL before expansion, for its summary.
type written struct {
	args []string
	url  string
}

// expandRefs expands the references in s and returns the non-empty values
// that variables supplied (defaults are not secrets).
func expandRefs(s string, lookup func(string) (string, bool)) (string, []string, error) {
	if !strings.Contains(s, "$") {
		return s, nil, nil
	}
	var b strings.Builder
	var used []string
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '$' {
			b.WriteByte(ch)
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '$':
			b.WriteByte('$')
			i++
			continue
		case i+1 >= len(s) || s[i+1] != '{':
			b.WriteByte('$') // a lone $ (a price, a regexp) stays
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", nil, fmt.Errorf("%q has a ${ without its closing }", s)
		}
		ref := s[i+2 : i+2+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validVarName(name) {
			return "", nil, fmt.Errorf("${%s} is not ${NAME} or ${NAME:-default} (a NAME is letters, digits and _, not starting with a digit)", ref)
		}
		v, ok := lookup(name)
		switch {
		case ok && v != "":
			b.WriteString(v)
			used = append(used, v)
		case hasDef:
			b.WriteString(def)
		case ok:
			// Set but empty: as the shell's ${NAME}.
		default:
			return "", nil, fmt.Errorf("${%s} is not set in your environment (write ${%s:-default} for a default)", name, name)
		}
		i += 2 + end
	}
	return b.String(), used, nil
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// References lists the ${…} references written in c's env, headers, args
// and URL, for check to say that a workspace's server keeps them as
// written.
func (c Config) References() []string {
	var out []string
	add := func(s string) {
		for {
			i := strings.Index(s, "${")
			if i < 0 {
				return
			}
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				return
			}
			out = append(out, s[i:i+j+1])
			s = s[i+j+1:]
		}
	}
	for _, k := range Names(c.Env) {
		add(c.Env[k])
	}
	for _, k := range Names(c.Headers) {
		add(c.Headers[k])
	}
	for _, a := range c.Args {
		add(a)
	}
	add(c.URL)
	return out
}

// withPlaceholders replaces every ${…} reference in s with "0", so that a
// URL such as http://127.0.0.1:${PORT}/mcp can be checked for its shape
// before the environment is known.
func withPlaceholders(s string) string {
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return s
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return s
		}
		s = s[:i] + "0" + s[i+j+1:]
	}
}
