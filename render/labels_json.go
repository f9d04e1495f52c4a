package render

import (
	"encoding/json"
	"fmt"
)

// UnmarshalJSON reads a tiered label in the guild format, where each tier
// is a single string or a list of variants.
func (t *Tiered) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("a tiered label must be an object with detailed, friendly and whimsical: %w", err)
	}
	for key, dst := range map[string]*[]string{"detailed": &t.Detailed, "friendly": &t.Friendly, "whimsical": &t.Whimsical} {
		v, ok := raw[key]
		if !ok {
			continue
		}
		var one string
		if json.Unmarshal(v, &one) == nil {
			*dst = []string{one}
			continue
		}
		var many []string
		if err := json.Unmarshal(v, &many); err != nil {
			return fmt.Errorf("label tier %q must be a string or a list of strings", key)
		}
		*dst = many
	}
	return nil
}
