package tools

import (
	"encoding/json"
	"fmt"
)

// Variants is one label tier: a list of phrasings a view picks from. In JSON
// it may be written as a single string or a list of strings.
type Variants []string

// UnmarshalJSON accepts "text" or ["text", ...].
func (v *Variants) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*v = Variants{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("label tier must be a string or a list of strings")
	}
	*v = many
	return nil
}

// Tiered is a display field with the three label tiers.
type Tiered struct {
	Detailed  Variants `json:"detailed,omitempty"`
	Friendly  Variants `json:"friendly,omitempty"`
	Whimsical Variants `json:"whimsical,omitempty"`
}

// Manifest declares a tool: its name, description, JSON Schema parameters
// and display labels. The format is the original system's tools/*.json.
type Manifest struct {
	Name              string          `json:"name"`
	Description       string          `json:"description"`
	Parameters        json.RawMessage `json:"parameters"`
	HumanLabel        *Tiered         `json:"humanLabel,omitempty"`
	HumanDescription  *Tiered         `json:"humanDescription,omitempty"`
	HumanCallLabel    *Tiered         `json:"humanCallLabel,omitempty"`
	HumanWorkingLabel *Tiered         `json:"humanWorkingLabel,omitempty"`
}
