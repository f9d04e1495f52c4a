//go:build unix

package discovery

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

const secret = "4f1c0ffee00d2b7a9e8d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817"

func record(t *testing.T, workspace string) Record {
	t.Helper()
	canon, err := Canonical(workspace)
	if err != nil {
		t.Fatal(err)
	}
	return Record{URL: "http://127.0.0.1:8765/", Token: secret, PID: os.Getpid(), Workspace: canon}
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"runtime dir", map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000", "XDG_STATE_HOME": "/s", "HOME": "/h"}, "/run/user/1000/guildhall"},
		{"relative runtime dir is ignored", map[string]string{"XDG_RUNTIME_DIR": "run/user", "XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/guildhall/run"},
		{"state home", map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/guildhall/run"},
		{"relative state home is ignored", map[string]string{"XDG_STATE_HOME": "s", "HOME": "/h"}, "/h/.local/state/guildhall/run"},
		{"home", map[string]string{"HOME": "/h"}, "/h/.local/state/guildhall/run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc, err := Locate(func(k string) string { return tc.env[k] })
			if err != nil || loc.Dir() != tc.want {
				t.Errorf("Locate = %q, %v; want %q", loc.Dir(), err, tc.want)
			}
		})
	}
	if _, err := Locate(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") {
		t.Errorf("no environment: %v", err)
	}
}

func TestPublishWritesTheRecordForTheUserOnly(t *testing.T) {
	base := t.TempDir()
	ws := t.TempDir()
	loc := Location{Base: base, Sub: []string{"guildhall", "run"}}
	p, err := Publish(loc, record(t, ws))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(p.Path()) != filepath.Join(base, "guildhall", "run") || strings.Contains(p.Path(), secret) || strings.Contains(p.Path(), filepath.Base(ws)) {
		t.Errorf("path %s", p.Path())
	}
	for _, d := range []string{filepath.Join(base, "guildhall"), filepath.Join(base, "guildhall", "run")} {
		if m := mode(t, d); m.Perm() != 0o700 || !m.IsDir() {
			t.Errorf("%s is %v, want a 0700 folder", d, m)
		}
	}
	if m := mode(t, p.Path()); m.Perm() != 0o600 || !m.IsRegular() {
		t.Errorf("file is %v, want 0600", m)
	}
	var got Record
	b, _ := os.ReadFile(p.Path())
	if err := json.Unmarshal(b, &got); err != nil || got != record(t, ws) {
		t.Errorf("file holds %s (%v)", b, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p.Path()))
	if len(entries) != 1 {
		t.Errorf("the folder holds %d entries (a temporary file left?)", len(entries))
	}
	if err := p.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p.Path()); !os.IsNotExist(err) {
		t.Errorf("the file outlived Remove: %v", err)
	}
	if err := p.Remove(); err != nil {
		t.Errorf("a second Remove: %v", err)
	}
}

func TestOneFilePerWorkspaceWhateverItsSpelling(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ws, filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	a, _ := Canonical(ws)
	b, _ := Canonical(filepath.Join(root, "alias", ".", "..", "ws") + "/")
	c, _ := Canonical(filepath.Join(root, "alias"))
	if a != b || a != c || FileName(a) != FileName(c) {
		t.Errorf("one workspace, three names: %s %s %s", a, b, c)
	}
	other, _ := Canonical(root)
	if FileName(other) == FileName(a) {
		t.Error("two workspaces share a file")
	}
	if _, err := Canonical(filepath.Join(root, "missing")); err == nil {
		t.Error("a missing workspace has a canonical path")
	}
}

// TestPublishRefusesWhatAnAttackerPlanted: a process that can write below
// the base plants links, files and other users' folders where the token
// is about to go. Nothing is written through them, and nothing they point
// at changes.
func TestPublishRefusesWhatAnAttackerPlanted(t *testing.T) {
	ws := t.TempDir()
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, base, elsewhere string)
		want  string
	}{
		{"the folder is a link", func(t *testing.T, base, elsewhere string) {
			symlink(t, elsewhere, filepath.Join(base, "guildhall"))
		}, "symbolic link"},
		{"a folder above it is a link", func(t *testing.T, base, elsewhere string) {
			mkdir(t, filepath.Join(elsewhere, "run"))
			symlink(t, elsewhere, filepath.Join(base, "guildhall"))
		}, "symbolic link"},
		{"the last folder is a link", func(t *testing.T, base, elsewhere string) {
			mkdir(t, filepath.Join(base, "guildhall"))
			symlink(t, elsewhere, filepath.Join(base, "guildhall", "run"))
		}, "symbolic link"},
		{"a dangling link for the folder", func(t *testing.T, base, elsewhere string) {
			mkdir(t, filepath.Join(base, "guildhall"))
			symlink(t, filepath.Join(elsewhere, "not-yet"), filepath.Join(base, "guildhall", "run"))
		}, "symbolic link"},
		{"the folder is a file", func(t *testing.T, base, elsewhere string) {
			write(t, filepath.Join(base, "guildhall"), "x")
		}, "not a folder"},
		{"the file is a link to a file outside", func(t *testing.T, base, elsewhere string) {
			mkdir(t, filepath.Join(base, "guildhall", "run"))
			write(t, filepath.Join(elsewhere, "loot"), "before")
			symlink(t, filepath.Join(elsewhere, "loot"), filepath.Join(base, "guildhall", "run", FileName(canon(t, ws))))
		}, "not a regular file"},
		{"the file is a dangling link", func(t *testing.T, base, elsewhere string) {
			mkdir(t, filepath.Join(base, "guildhall", "run"))
			symlink(t, filepath.Join(elsewhere, "created-through-the-link"), filepath.Join(base, "guildhall", "run", FileName(canon(t, ws))))
		}, "not a regular file"},
		{"the file is a folder", func(t *testing.T, base, elsewhere string) {
			mkdir(t, filepath.Join(base, "guildhall", "run", FileName(canon(t, ws))))
		}, "not a regular file"},
		{"the file is a fifo", func(t *testing.T, base, elsewhere string) {
			mkdir(t, filepath.Join(base, "guildhall", "run"))
			if err := syscall.Mkfifo(filepath.Join(base, "guildhall", "run", FileName(canon(t, ws))), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"the folder belongs to another user", func(t *testing.T, base, elsewhere string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to chown")
			}
			mkdir(t, filepath.Join(base, "guildhall", "run"))
			if err := os.Chown(filepath.Join(base, "guildhall", "run"), 54321, 54321); err != nil {
				t.Fatal(err)
			}
		}, "belongs to user 54321"},
		{"a folder above it belongs to another user", func(t *testing.T, base, elsewhere string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to chown")
			}
			mkdir(t, filepath.Join(base, "guildhall"))
			if err := os.Chown(filepath.Join(base, "guildhall"), 54321, 54321); err != nil {
				t.Fatal(err)
			}
		}, "belongs to user 54321"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, elsewhere := t.TempDir(), t.TempDir()
			tc.plant(t, base, elsewhere)
			_, err := Publish(Location{Base: base, Sub: []string{"guildhall", "run"}}, record(t, ws))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Publish = %v, want an error about %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), base) {
				t.Errorf("the error does not name the path: %v", err)
			}
			filepath.WalkDir(elsewhere, func(p string, d os.DirEntry, err error) error {
				if d != nil && !d.IsDir() {
					if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
						t.Errorf("the token reached %s", p)
					}
				}
				return nil
			})
			if b, err := os.ReadFile(filepath.Join(elsewhere, "loot")); err == nil && string(b) != "before" {
				t.Errorf("the link's target changed: %q", b)
			}
			if _, err := os.Lstat(filepath.Join(elsewhere, "created-through-the-link")); err == nil {
				t.Error("a file was created through a dangling link")
			}
		})
	}
}

func TestPublishNarrowsALooseFolderOfOurs(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "guildhall")
	mkdir(t, dir)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	p, err := Publish(Location{Base: base, Sub: []string{"guildhall"}}, record(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Remove()
	if m := mode(t, dir); m.Perm() != 0o700 {
		t.Errorf("folder left %v", m.Perm())
	}
}

func TestPublishReplacesAStaleFile(t *testing.T) {
	base, ws := t.TempDir(), t.TempDir()
	loc := Location{Base: base, Sub: []string{"guildhall"}}
	stale := filepath.Join(base, "guildhall", FileName(canon(t, ws)))
	mkdir(t, filepath.Dir(stale))
	write(t, stale, `{"url":"http://127.0.0.1:1/","token":"old","pid":1,"workspace":"x"}`)
	if err := os.Chmod(stale, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Publish(loc, record(t, ws))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(stale)
	if !strings.Contains(string(b), secret) || mode(t, stale).Perm() != 0o600 {
		t.Errorf("stale file not replaced: %s %v", b, mode(t, stale))
	}
	p.Remove()
}

// TestRemoveTakesOnlyItsOwnFile: after this server wrote its file, another
// server (or an attacker) replaced it; Remove leaves the replacement.
func TestRemoveTakesOnlyItsOwnFile(t *testing.T) {
	ws := t.TempDir()
	for _, tc := range []struct {
		name    string
		replace func(t *testing.T, path, elsewhere string)
		wantErr bool
	}{
		{"another server's record", func(t *testing.T, path, elsewhere string) {
			write(t, path, `{"url":"http://127.0.0.1:9/","token":"theirs","pid":99999,"workspace":"/w"}`)
		}, false},
		{"garbage", func(t *testing.T, path, elsewhere string) { write(t, path, "not json") }, false},
		{"a link to the operator's file", func(t *testing.T, path, elsewhere string) {
			write(t, filepath.Join(elsewhere, "loot"), "before")
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			symlink(t, filepath.Join(elsewhere, "loot"), path)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, elsewhere := t.TempDir(), t.TempDir()
			p, err := Publish(Location{Base: base, Sub: []string{"guildhall"}}, record(t, ws))
			if err != nil {
				t.Fatal(err)
			}
			tc.replace(t, p.Path(), elsewhere)
			err = p.Remove()
			if (err != nil) != tc.wantErr {
				t.Errorf("Remove = %v", err)
			}
			if _, err := os.Lstat(p.Path()); err != nil {
				t.Errorf("Remove took the replacement: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(elsewhere, "loot")); err == nil && string(b) != "before" {
				t.Errorf("the link's target changed: %q", b)
			}
		})
	}
	// The folder itself gone (the runtime dir was cleaned): nothing to do.
	base := t.TempDir()
	p, err := Publish(Location{Base: base, Sub: []string{"guildhall"}}, record(t, ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(base, "guildhall")); err != nil {
		t.Fatal(err)
	}
	if err := p.Remove(); err != nil {
		t.Errorf("Remove after the folder went: %v", err)
	}
}

// TestReadersNeverSeeHalfAFile: a reader racing writers of the same file
// only ever reads a whole record.
func TestReadersNeverSeeHalfAFile(t *testing.T) {
	base, ws := t.TempDir(), t.TempDir()
	loc := Location{Base: base, Sub: []string{"guildhall"}}
	rec := record(t, ws)
	rec.Workspace = strings.Repeat("/long", 2000) // a file larger than one write
	path := filepath.Join(loc.Dir(), FileName(rec.Workspace))
	if _, err := Publish(loc, rec); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := Publish(loc, rec); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 2000 {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var got Record
		if err := json.Unmarshal(b, &got); err != nil || got != rec {
			t.Fatalf("a reader saw %d bytes that are not the record: %v", len(b), err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestPublishRefusesAnIncompleteRecord(t *testing.T) {
	loc := Location{Base: t.TempDir(), Sub: []string{"guildhall"}}
	full := record(t, t.TempDir())
	for name, mutate := range map[string]func(*Record){
		"no url":       func(r *Record) { r.URL = "" },
		"no token":     func(r *Record) { r.Token = "" },
		"no pid":       func(r *Record) { r.PID = 0 },
		"no workspace": func(r *Record) { r.Workspace = "" },
	} {
		r := full
		mutate(&r)
		if _, err := Publish(loc, r); err == nil {
			t.Errorf("%s: published", name)
		}
	}
	if _, err := Publish(Location{Base: "relative", Sub: []string{"g"}}, full); err == nil {
		t.Error("a relative base was accepted")
	}
}

func canon(t *testing.T, ws string) string {
	t.Helper()
	c, err := Canonical(ws)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
