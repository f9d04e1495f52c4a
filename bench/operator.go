package bench

import (
	"strings"
	"sync"
	"unicode"

	"github.com/guildhall/guildhall/internal/editdist"
)

// JudgementAnswer is what the simulated operator says to a question the
// benchmark did not foresee. The question still counts against the score.
const JudgementAnswer = "No further guidance is available: use your judgement, say which assumption you made, and carry on."

// minSimilarity is how close a question must be to a humanResponses key
// to get its answer: small models rephrase a little ("Which language
// should I use?" for "What language should I use?"), never a lot.
const minSimilarity = 0.8

// Operator answers ask_human for a benchmark: from the benchmark's
// humanResponses when a question matches one near-exactly, else with
// JudgementAnswer. It counts every question. It is safe for concurrent
// use.
type Operator struct {
	keys    []string // normalised humanResponses keys
	answers []string

	mu        sync.Mutex
	asked     int
	answered  int
	exchanges []Exchange
}

// Exchange is one question and the answer it got.
type Exchange struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
	// Matched names the humanResponses key that answered, "" for the
	// "use your judgement" answer.
	Matched string `json:"matched,omitempty"`
}

// NewOperator makes the operator of a benchmark's humanResponses.
func NewOperator(responses map[string]string) *Operator {
	o := &Operator{}
	for k, v := range responses {
		o.keys = append(o.keys, k)
		o.answers = append(o.answers, v)
	}
	return o
}

// Answer answers one question and records it.
func (o *Operator) Answer(question string) Exchange {
	q := normalise(question)
	best, bestSim := -1, 0.0
	for i, k := range o.keys {
		sim := similarity(q, normalise(k))
		if sim > bestSim || (sim == bestSim && best >= 0 && k < o.keys[best]) {
			best, bestSim = i, sim
		}
	}
	ex := Exchange{Question: question, Answer: JudgementAnswer}
	if best >= 0 && bestSim >= minSimilarity {
		ex.Answer, ex.Matched = o.answers[best], o.keys[best]
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.asked++
	if ex.Matched != "" {
		o.answered++
	}
	o.exchanges = append(o.exchanges, ex)
	return ex
}

// Counts reports how many questions were asked and how many of them a
// humanResponses entry answered.
func (o *Operator) Counts() (asked, answered int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.asked, o.answered
}

// Exchanges lists the questions in the order they came.
func (o *Operator) Exchanges() []Exchange {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Exchange(nil), o.exchanges...)
}

// normalise folds case and reduces punctuation and runs of space to
// single spaces, so "Should I handle negatives?" and "should i handle
// negatives" are the same question.
func normalise(s string) string {
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}

// maxCompareRunes bounds the edit-distance work per pair: a question
// longer than this is compared by its first runes only.
const maxCompareRunes = 600

// similarity is 1 − edit distance / length of the longer string, over
// runes: 1 for equal strings, 0 for nothing in common.
func similarity(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > maxCompareRunes {
		ra = ra[:maxCompareRunes]
	}
	if len(rb) > maxCompareRunes {
		rb = rb[:maxCompareRunes]
	}
	n := max(len(ra), len(rb))
	if n == 0 {
		return 1
	}
	return 1 - float64(editdist.Levenshtein(ra, rb))/float64(n)
}
