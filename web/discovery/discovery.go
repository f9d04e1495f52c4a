// Package discovery tells the operator's own programs on this host where a
// running Guildhall serves its browser console: one small file per
// workspace, holding the console's URL and access token, in a folder only
// the operator can read, written when the server starts and removed when
// it stops. A later `guildhall attach` reads it; nothing passes the token
// on a command line.
//
// The folder is $XDG_RUNTIME_DIR/guildhall, else
// $XDG_STATE_HOME/guildhall/run, else ~/.local/state/guildhall/run. It is
// made 0700 and each file 0600. Every folder below the base and the file
// itself are opened without following symbolic links, and a file is
// written to a temporary name and renamed into place, so a reader never
// sees half a file and a planted link never redirects the token.
package discovery

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
)

// Record is the content of a discovery file.
type Record struct {
	// URL is the console's address without the token
	// (http://127.0.0.1:8765/).
	URL string `json:"url"`
	// Token is the access token: send it as "Authorization: Bearer".
	Token string `json:"token"`
	// PID is the serving process; a reader finding it gone knows the file
	// is stale (the process was killed before it could remove it).
	PID int `json:"pid"`
	// Workspace is the canonical path of the workspace served.
	Workspace string `json:"workspace"`
}

// Location is where discovery files live: Base is a folder the operator's
// environment names (trusted, and it may be a symbolic link), Sub the
// folders below it that this package makes and checks.
type Location struct {
	Base string
	Sub  []string
}

// Dir is the folder Location names.
func (l Location) Dir() string {
	return filepath.Join(append([]string{l.Base}, l.Sub...)...)
}

// Locate picks the folder from the environment (getenv is os.Getenv in
// production). Relative XDG paths are ignored, as the XDG base directory
// specification asks.
func Locate(getenv func(string) string) (Location, error) {
	if d := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return Location{Base: d, Sub: []string{"guildhall"}}, nil
	}
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return Location{Base: d, Sub: []string{"guildhall", "run"}}, nil
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return Location{Base: h, Sub: []string{".local", "state", "guildhall", "run"}}, nil
	}
	return Location{}, errors.New("discovery: none of XDG_RUNTIME_DIR, XDG_STATE_HOME or HOME is an absolute path")
}

// Canonical is the workspace path a discovery file is named by: absolute,
// cleaned, with every symbolic link resolved, so that two spellings of one
// workspace find one file.
func Canonical(workspace string) (string, error) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("discovery: workspace %s: %w", workspace, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("discovery: workspace %s: %w", workspace, err)
	}
	return real, nil
}

// FileName is the name of the discovery file of a canonical workspace
// path: a hash, so that the name carries nothing of the path (which the
// workspace's owner chose) and is always one safe file name.
func FileName(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return hex.EncodeToString(sum[:16]) + ".json"
}

// Published is a discovery file this process wrote. Remove it when the
// server stops.
type Published struct {
	loc  Location
	name string
	rec  Record

	once sync.Once
	err  error
}

// Path is where the file is.
func (p *Published) Path() string {
	return filepath.Join(p.loc.Dir(), p.name)
}

// Publish writes rec as the discovery file of rec.Workspace (a Canonical
// path) in loc, replacing a stale one. Folders are made 0700 as needed; a
// symbolic link or a folder of another user anywhere below loc.Base, or a
// file of that name that is not a regular file, is refused.
func Publish(loc Location, rec Record) (*Published, error) {
	if rec.URL == "" || rec.Token == "" || rec.Workspace == "" || rec.PID <= 0 {
		return nil, errors.New("discovery: a record needs a URL, a token, a pid and a workspace")
	}
	if !filepath.IsAbs(loc.Base) {
		return nil, fmt.Errorf("discovery: folder %q is not absolute", loc.Base)
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("discovery: encode: %w", err)
	}
	name := FileName(rec.Workspace)
	if err := publish(loc, name, append(data, '\n')); err != nil {
		return nil, err
	}
	return &Published{loc: loc, name: name, rec: rec}, nil
}

// Remove deletes the file if it is still the one this process wrote (its
// pid and token), so that it never removes another server's file. A file
// already gone is no error. Later calls return the first call's result.
func (p *Published) Remove() error {
	p.once.Do(func() { p.err = remove(p.loc, p.name, p.rec) })
	return p.err
}

// maxFile bounds what Remove reads back: a record is a few hundred bytes.
const maxFile = 64 << 10

// ours reports whether data is the record rec.
func ours(data []byte, rec Record) bool {
	var got Record
	return json.Unmarshal(data, &got) == nil && got.PID == rec.PID && got.Token == rec.Token
}
