package store

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// Settings is the project's settings.json.
type Settings struct {
	// Effort is the project default effort tier, "" when unset.
	Effort string `json:"effort,omitempty"`
	// LogLevel is the project default log level (full or standard).
	LogLevel string `json:"logLevel,omitempty"`
}

// ReadSettings reads settings.json. A missing, torn or malformed file reads
// as empty settings: settings are defaults, never a reason not to run.
func (w Workspace) ReadSettings() Settings {
	var s Settings
	b, err := os.ReadFile(filepath.Join(w.Orchestration(), SettingsFile))
	if err != nil {
		return s
	}
	if json.Unmarshal(b, &s) != nil {
		return Settings{}
	}
	return s
}

// WriteSettings writes settings.json atomically.
func (w Workspace) WriteSettings(s Settings) error {
	if err := w.EnsureRecords(false); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(w.Orchestration(), SettingsFile), append(b, '\n'), 0o644)
}
