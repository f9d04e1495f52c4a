package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// maxResultBytes caps one result file.
const maxResultBytes = 4 << 20

// Merge reads the result files (*.json written by WriteResult) under each
// folder, recursively, into one report: how the runs of `guildhall bench
// --one TASK --out DIR` fanned out over a cluster come together. A file
// that is not a result is an error naming it; the same run (variant,
// benchmark, repetition) found twice is an error too, since it would be
// counted twice.
func Merge(suite string, dirs ...string) (*Report, error) {
	rep := &Report{Suite: suite}
	seen := map[string]string{}
	variants := map[string]bool{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(p, ".json") || strings.HasPrefix(d.Name(), ".") || d.Name() == "report.json" {
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			r, err := readResult(p)
			if err != nil {
				return err
			}
			key := fmt.Sprintf("%s\x00%s\x00%d", r.Variant, r.Benchmark, r.Repetition)
			if first, dup := seen[key]; dup {
				return fmt.Errorf("%s and %s hold the same run (%s #%d of %s); remove one", first, p, r.Benchmark, r.Repetition, r.Variant)
			}
			seen[key] = p
			if !variants[r.Variant] {
				variants[r.Variant] = true
				rep.Variants = append(rep.Variants, r.Variant)
			}
			rep.Results = append(rep.Results, r)
			rep.Repeat = max(rep.Repeat, r.Repetition)
			if rep.StartedAt.IsZero() || r.StartedAt.Before(rep.StartedAt) {
				rep.StartedAt = r.StartedAt
			}
			rep.Seconds += r.Seconds
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(rep.Results) == 0 {
		return nil, fmt.Errorf("no result files under %s", strings.Join(dirs, ", "))
	}
	sort.Slice(rep.Results, func(i, j int) bool {
		a, b := rep.Results[i], rep.Results[j]
		if a.Benchmark != b.Benchmark {
			return a.Benchmark < b.Benchmark
		}
		if a.Variant != b.Variant {
			return a.Variant < b.Variant
		}
		return a.Repetition < b.Repetition
	})
	return rep, nil
}

func readResult(p string) (Result, error) {
	data, err := readCapped(p, maxResultBytes)
	if err != nil {
		return Result{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return Result{}, fmt.Errorf("%s is not a benchmark result: %w", p, err)
	}
	if !ValidName(r.Benchmark) || r.Variant == "" || r.Repetition < 1 {
		return Result{}, fmt.Errorf("%s is not a benchmark result: it names no valid benchmark, variant and repetition", p)
	}
	return r, nil
}
