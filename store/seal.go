package store

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// The records that make Guildhall act — meta.json and state.json (what a
// resume runs), the pause marker, and the queue's items (what the
// scheduler starts) — are sealed: each carries an HMAC-SHA256 under a key
// of the operator's, kept outside the workspace. A repository can ship an
// .orchestration folder, committed or unpacked from an archive, but it
// cannot seal one, so a record that fails the check is foreign: it may be
// shown (through the sanitiser) but never resumed, dispatched or continued.
//
// The MAC is the first member of the record's JSON object,
//
//	{"guildhallMac":"<64 hex>", ...the record's own members...}
//
// so the file stays the JSON object readers expect (they ignore the extra
// member), and it covers the exact bytes of the record as written, with the
// workspace's canonical path, the kind of record and its name (run or item
// id) bound in: a sealed record copied into another workspace or renamed
// to another run is foreign there.
//
// What the seal does not cover: the log (append-only; it is shown, never
// obeyed, except that a resumed run reads which roles it already started),
// settings.json (effort and log-level defaults), summaries and plans; and
// an older sealed version of the same record put back in place.

// Record kinds, bound into the MAC.
const (
	SealMeta      = "meta"
	SealState     = "state"
	SealPause     = "pause"
	SealQueueItem = "queue-item"
)

const (
	macPrefix = `{"guildhallMac":"`
	macHexLen = 2 * sha256.Size
	// sealedHead is the length of `{"guildhallMac":"<hex>"`.
	sealedHead = len(macPrefix) + macHexLen + 1
	sealDomain = "guildhall-records-v1"
)

// Sealer seals and checks the records of one workspace. The zero value and
// a nil *Sealer seal nothing and accept nothing: every record is foreign.
type Sealer struct {
	key   []byte
	scope string // the workspace's canonical path
}

// NewSealer returns a sealer for the records of the workspace whose
// canonical (symlink-free, absolute) path is workspace.
func NewSealer(key []byte, workspace string) *Sealer {
	return &Sealer{key: append([]byte(nil), key...), scope: workspace}
}

// Seal returns body, a JSON object, with its MAC as the first member. A
// nil sealer returns body unchanged (an unsealed, foreign record).
//
// Whitespace after the object is not covered: a file may end in a newline.
func (s *Sealer) Seal(kind, name string, body []byte) []byte {
	body = bytes.TrimRight(body, " \t\r\n")
	if !s.usable() || len(body) < 2 || body[0] != '{' {
		return body
	}
	mac := s.mac(kind, name, body)
	out := make([]byte, 0, sealedHead+len(body)+1)
	out = append(out, macPrefix...)
	out = hex.AppendEncode(out, mac)
	out = append(out, '"')
	if rest := bytes.TrimLeft(body[1:], " \t\r\n"); len(rest) > 0 && rest[0] == '}' {
		return append(out, body[1:]...) // an empty object
	}
	out = append(out, ',')
	return append(out, body[1:]...)
}

// Check reports whether data is a record of this kind and name sealed for
// this workspace by this key.
func (s *Sealer) Check(kind, name string, data []byte) bool {
	if !s.usable() {
		return false
	}
	got, body, ok := splitSealed(data)
	return ok && hmac.Equal(got, s.mac(kind, name, body))
}

// splitSealed splits a sealed record into its MAC and the body as it was
// before the MAC went in; ok is false when data carries no MAC.
func splitSealed(data []byte) (mac, body []byte, ok bool) {
	data = bytes.TrimRight(data, " \t\r\n")
	if len(data) < sealedHead+1 || !bytes.HasPrefix(data, []byte(macPrefix)) || data[sealedHead-1] != '"' {
		return nil, nil, false
	}
	mac = make([]byte, sha256.Size)
	if _, err := hex.Decode(mac, data[len(macPrefix):sealedHead-1]); err != nil {
		return nil, nil, false
	}
	rest := data[sealedHead:]
	body = make([]byte, 0, len(rest)+1)
	body = append(body, '{')
	switch {
	case rest[0] == ',':
		body = append(body, rest[1:]...)
	case bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte("}")):
		body = append(body, rest...)
	default:
		return nil, nil, false
	}
	return mac, body, true
}

// Unsealed is a record's own body: without its MAC when it carries one,
// else as it is. Adopting a record (adopt.go) seals this body anew.
func Unsealed(data []byte) []byte {
	if _, body, ok := splitSealed(data); ok {
		return body
	}
	return bytes.TrimRight(data, " \t\r\n")
}

// Scope is the workspace path the sealer binds into every MAC.
func (s *Sealer) Scope() string {
	if s == nil {
		return ""
	}
	return s.scope
}

// For is the sealer with the same key for the workspace at another
// canonical path: it tells whether a record was sealed by this key in the
// folder the record names (a folder moved or renamed since).
func (s *Sealer) For(workspace string) *Sealer {
	if s == nil {
		return nil
	}
	return &Sealer{key: s.key, scope: workspace}
}

func (s *Sealer) usable() bool { return s != nil && len(s.key) > 0 }

func (s *Sealer) mac(kind, name string, body []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	for _, part := range []string{sealDomain, s.scope, kind, name} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(body)
	return h.Sum(nil)
}
