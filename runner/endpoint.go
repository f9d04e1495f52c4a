package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
)

// errEndpoint ends a run whose endpoint never answered in this process: a
// setup problem (a wrong URL, a server not running, a refused key) that
// waiting cannot cure, so the run is not suspended.
var errEndpoint = errors.New("the model endpoint never answered")

// errHalted ends a run whose provider keeps failing although its probe
// says it is back: resuming again would loop forever.
var errHalted = errors.New("the model endpoint keeps failing")

// maxRelapses bounds the suspensions a run sits through whose probe said
// the provider was back but whose next call failed again, with no
// successful call in between. A real outage (the probe failing too) is not
// counted: the run waits it out.
const maxRelapses = 3

// EndpointErrorKind is the error kind of a run that ended because its
// endpoint never answered.
const EndpointErrorKind = "endpoint_unreachable"

// failStreak counts a run's failed model calls since its last success, and
// the relapses among them.
type failStreak struct {
	calls    int
	relapses int
	category provider.Category
	status   int
}

func (s *failStreak) note(pe *provider.Error) {
	s.calls++
	s.category, s.status = provider.CategoryMalformed, 0
	if pe != nil {
		s.category, s.status = pe.Category, pe.StatusCode
	}
}

// haltCard is the run's card when the relapses ran out. It quotes no
// provider text: the endpoint's own message is on the provider_failure
// events.
func haltCard(s failStreak, runID string) event.Card {
	what := string(s.category)
	if s.status != 0 {
		what = fmt.Sprintf("HTTP %d", s.status)
	}
	msg := fmt.Sprintf("The model endpoint kept failing: %d requests in a row failed (%s), and each of the %d times its model list said it was back, the next request failed again. "+
		"The run stopped instead of retrying forever. The endpoint's own message is on the run's provider_failure events (`guildhall show %s`); "+
		"fix the server, then continue the work with `guildhall run --continue %s \"…\"`.",
		s.calls, what, s.relapses, runID, runID)
	card := errorCard("llm_unavailable", msg)
	card.Error.Details = []byte(fmt.Sprintf(`{"category":%q,"statusCode":%d,"failedRequests":%d,"relapses":%d,"see":"provider_failure events in the run log"}`,
		s.category, s.status, s.calls, s.relapses))
	return card
}

// endpointCard is the card of a run whose endpoint never answered.
func endpointCard(u *provider.Unanswered) event.Card {
	msg := u.Explain()
	return errorCard(EndpointErrorKind, strings.ToUpper(msg[:1])+msg[1:])
}
