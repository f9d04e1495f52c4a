package web

// The console's pages live under a path prefix drawn per server start,
// /s/RANDOM/, which is also the access cookie's path (auth.go): it keeps the
// cookie from every other server on the host, whose ports a cookie's scope
// ignores. This file draws the prefix and strips it from a request.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
)

// prefixBytes is the prefix's entropy. It is no credential (the token is),
// but a server that could guess it could have the operator's browser send
// it the cookie.
const prefixBytes = 16

// newPrefix draws a fresh prefix: "/s/" and 32 hex digits, no trailing
// slash.
func newPrefix() (string, error) {
	b := make([]byte, prefixBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("web: path prefix: %w", err)
	}
	return "/s/" + hex.EncodeToString(b), nil
}

// stripPrefix returns r with the prefix removed from its path, and whether
// the path was under the prefix ("/s/R/x" becomes "/x"; "/s/R" itself is
// not under it, see serve). Paths outside the prefix are served as they
// are, to Bearer clients.
func stripPrefix(r *http.Request, prefix string) (*http.Request, bool) {
	rest, ok := strings.CutPrefix(r.URL.Path, prefix+"/")
	if !ok || prefix == "" {
		return r, false
	}
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path = "/" + rest
	if raw, ok := strings.CutPrefix(r.URL.RawPath, prefix+"/"); ok {
		u.RawPath = "/" + raw
	} else {
		u.RawPath = ""
	}
	r2.URL = &u
	return r2, true
}
