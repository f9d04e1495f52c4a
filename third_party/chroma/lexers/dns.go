package lexers

import (
	"regexp"

	"github.com/alecthomas/chroma/v2"
)

// setDNSAnalyser is an init function upstream; it runs when the embedded lexers are
// loaded (Guildhall fork, see README.md).
func setDNSAnalyser(reg *chroma.LexerRegistry) {
	zoneAnalyserRe := regexp.MustCompile(`(?m)^@\s+IN\s+SOA\s+`)
	reg.Get("dns").SetAnalyser(func(text string) float32 {
		if zoneAnalyserRe.FindString(text) != "" {
			return 1.0
		}
		return 0.0
	})
}
