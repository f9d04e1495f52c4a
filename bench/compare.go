package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Comparison is two variants' pass rates and how sure the difference is.
type Comparison struct {
	// A is the variant with the higher pass rate (the first of the two on
	// a tie), B the other.
	A, B         string
	RateA, RateB float64
	// Diff is RateA − RateB; Low and High bound its 95% bootstrap
	// interval.
	Diff, Low, High float64
	Benchmarks      int
	Resamples       int
}

// bootstrapResamples is how many resamples the interval is drawn from.
const bootstrapResamples = 10000

// Compare compares two variants of a report. The interval comes from a
// paired bootstrap over benchmarks: each resample draws benchmarks with
// replacement and takes both variants' runs of each, because runs of one
// benchmark are not independent of each other (a hard task fails for
// every repetition) and the two variants ran the same tasks. The seed is
// fixed, so a report always states the same interval.
func Compare(r *Report, a, b string) Comparison {
	ranked := r.Ranked()
	if indexOf(ranked, b) < indexOf(ranked, a) {
		a, b = b, a
	}
	benches := r.Benchmarks()
	type counts struct{ passA, runsA, passB, runsB float64 }
	per := make([]counts, 0, len(benches))
	for _, name := range benches {
		sa, sb := Sum(r.Select(a, name)), Sum(r.Select(b, name))
		if sa.Runs == 0 || sb.Runs == 0 {
			continue // only benchmarks both ran are compared
		}
		per = append(per, counts{float64(sa.Passes), float64(sa.Runs), float64(sb.Passes), float64(sb.Runs)})
	}
	c := Comparison{A: a, B: b, Benchmarks: len(per), Resamples: bootstrapResamples}
	rate := func(sample []counts) (float64, float64) {
		var t counts
		for _, x := range sample {
			t.passA += x.passA
			t.runsA += x.runsA
			t.passB += x.passB
			t.runsB += x.runsB
		}
		return t.passA / t.runsA, t.passB / t.runsB
	}
	if len(per) == 0 {
		return c
	}
	c.RateA, c.RateB = rate(per)
	c.Diff = c.RateA - c.RateB
	rng := rand.New(rand.NewPCG(19, 2026))
	diffs := make([]float64, bootstrapResamples)
	sample := make([]counts, len(per))
	for i := range diffs {
		for k := range sample {
			sample[k] = per[rng.IntN(len(per))]
		}
		ra, rb := rate(sample)
		diffs[i] = ra - rb
	}
	sort.Float64s(diffs)
	c.Low, c.High = diffs[int(0.025*float64(len(diffs)))], diffs[int(math.Ceil(0.975*float64(len(diffs))))-1]
	return c
}

// Significant reports whether the interval excludes zero.
func (c Comparison) Significant() bool { return c.Low > 0 || c.High < 0 }

// Note is the comparison in words, for the terminal and the report.
func (c Comparison) Note() string {
	if c.Benchmarks == 0 {
		return "no benchmark was run by both variants, so they cannot be compared"
	}
	head := fmt.Sprintf("%s − %s: pass rate %+.1f points, 95%% bootstrap interval [%+.1f, %+.1f] over %d benchmarks",
		c.A, c.B, 100*c.Diff, 100*c.Low, 100*c.High, c.Benchmarks)
	switch {
	case c.Significant():
		return head + fmt.Sprintf(": the interval excludes 0, so on tasks like these %s finishes more than %s.", c.A, c.B)
	case c.Benchmarks < 5:
		return head + ": the interval includes 0 and there are too few benchmarks to tell; add tasks."
	default:
		return head + ": the interval includes 0, so the difference may be noise; add --repeat or tasks."
	}
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return len(xs)
}
