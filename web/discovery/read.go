package discovery

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
)

// ErrNotFound is a workspace without a discovery file: no console of this
// user serves it.
var ErrNotFound = errors.New("discovery: no console serves this workspace")

// Lookup reads the discovery file of a canonical workspace path. The file
// must be a regular file of this user that nobody else can read, and name
// that workspace; ErrNotFound when there is none. A record whose process
// is gone is returned all the same: Alive tells.
func Lookup(loc Location, canonical string) (Record, error) {
	name := FileName(canonical)
	data, err := read(loc, name)
	if err != nil {
		return Record{}, err
	}
	rec, err := decode(data, filepath.Join(loc.Dir(), name))
	if err != nil {
		return Record{}, err
	}
	if rec.Workspace != canonical {
		return Record{}, fmt.Errorf("discovery: %s names workspace %q, not %q; refusing it", filepath.Join(loc.Dir(), name), rec.Workspace, canonical)
	}
	return rec, nil
}

// List reads every discovery file in loc, sorted by workspace. Files that
// are not valid records (or not named for their workspace) are skipped:
// List is for showing the operator what is there.
func List(loc Location) ([]Record, error) {
	ns, err := names(loc)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, n := range ns {
		data, err := read(loc, n)
		if err != nil {
			continue
		}
		rec, err := decode(data, n)
		if err != nil || FileName(rec.Workspace) != n {
			continue
		}
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Workspace < out[j].Workspace })
	return out, nil
}

// Alive reports whether the record's process still runs (as this user).
// A record of a process that is gone is stale: it was killed before it
// could remove its file.
func (r Record) Alive() bool { return alive(r.PID) }

// decode parses a record and checks its fields.
func decode(data []byte, where string) (Record, error) {
	var rec Record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return Record{}, fmt.Errorf("discovery: %s does not parse: %w", where, err)
	}
	u, err := url.Parse(rec.URL)
	switch {
	case err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil:
		return Record{}, fmt.Errorf("discovery: %s: url %q is not an http address", where, rec.URL)
	case rec.Token == "" || rec.PID <= 0 || !filepath.IsAbs(rec.Workspace):
		return Record{}, fmt.Errorf("discovery: %s lacks a token, a pid or an absolute workspace", where)
	}
	return rec, nil
}
