package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"regexp"

	"github.com/guildhall/guildhall/internal/runetext"
)

// search_text limits.
const (
	searchMaxPerFile   = 100
	searchMaxTotal     = 1000
	searchMaxLineChars = 300
	searchMaxFileBytes = 8 << 20
	searchMaxWalk      = 200_000
	searchMaxPattern   = 1000
)

// searchText is search_text {pattern, paths?}: lines matching a Go (RE2)
// regular expression, which runs in linear time whatever the pattern.
type searchText struct{}

func (searchText) Manifest() Manifest { return manifestOf("search_text") }

type textMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

func (searchText) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Pattern string   `json:"pattern"`
		Paths   []string `json:"paths"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	if len(a.Pattern) > searchMaxPattern {
		return Fail(KindInvalidArguments, fmt.Sprintf("pattern is longer than %d characters", searchMaxPattern))
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return Fail(KindInvalidArguments, fmt.Sprintf("pattern is not a valid Go regular expression: %v", err))
	}
	ws := env.Workspace
	roots := []string{"."}
	givens := []string{"."}
	if len(a.Paths) > 0 {
		roots, givens = nil, nil
		for _, p := range a.Paths {
			rel, err := ws.Resolve(p)
			if err != nil {
				return pathFail(p, err)
			}
			roots, givens = append(roots, rel), append(givens, p)
		}
	}
	s := searcher{ws: ws, re: re, seen: map[string]bool{}}
	for i, root := range roots {
		fi, err := ws.root.Lstat(root)
		if err != nil {
			return pathFail(givens[i], err)
		}
		if !fi.IsDir() {
			if !fi.Mode().IsRegular() {
				return pathFail(givens[i], pathErr(givens[i], KindInvalidArguments, reasonNotRegular))
			}
			s.file(ctx, root)
			continue
		}
		limited, err := ws.walk(ctx, root, walkOptions{skipGit: true, maxEntries: searchMaxWalk}, func(rel string, d fs.DirEntry) error {
			if d.Type().IsRegular() {
				s.file(ctx, rel)
			}
			if s.full() {
				return fs.SkipAll
			}
			return nil
		})
		if err != nil {
			return pathFail(givens[i], err)
		}
		s.truncated = s.truncated || limited
		if s.full() {
			break
		}
	}
	if s.matches == nil {
		s.matches = []textMatch{}
	}
	if s.cappedFiles == nil {
		s.cappedFiles = []string{}
	}
	return OK(map[string]any{
		"matches": s.matches, "truncated": s.truncated, "filesSearched": s.files,
		"filesTruncated": s.cappedFiles, "skippedLarge": s.skippedLarge,
	})
}

type searcher struct {
	ws           *Workspace
	re           *regexp.Regexp
	seen         map[string]bool
	matches      []textMatch
	cappedFiles  []string
	files        int
	skippedLarge int
	truncated    bool
}

func (s *searcher) full() bool { return s.truncated }

// file searches one regular file; binary and oversized files are skipped.
func (s *searcher) file(ctx context.Context, rel string) {
	if s.seen[rel] || ctx.Err() != nil {
		return
	}
	s.seen[rel] = true
	f, fi, err := s.ws.openRegular(rel, rel)
	if err != nil {
		return
	}
	defer f.Close()
	if fi.Size() > searchMaxFileBytes {
		s.skippedLarge++
		return
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(8000); looksBinary(head) {
		return
	}
	s.files++
	n := 0
	for lineNo := 1; ; lineNo++ {
		line, _, err := readLine(br, 64<<10)
		if err == io.EOF || err != nil {
			return
		}
		if !s.re.Match(line) {
			continue
		}
		if n == searchMaxPerFile {
			s.cappedFiles = append(s.cappedFiles, rel)
			return
		}
		if len(s.matches) == searchMaxTotal {
			s.truncated = true
			return
		}
		text, cut := runetext.Cut(runetext.Decode(line), searchMaxLineChars)
		if cut {
			text += " [… line truncated]"
		}
		s.matches = append(s.matches, textMatch{Path: rel, Line: lineNo, Text: text})
		n++
	}
}
