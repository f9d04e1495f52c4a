package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
	s, _ := w.LoadSettings()
	return s
}

// LoadSettings is ReadSettings with the reason a present settings.json
// reads as empty: malformed JSON, or a *RecordError (a link, FIFO, device,
// or more than MaxSettingsBytes), which is never read. A missing file is
// no error.
func (w Workspace) LoadSettings() (Settings, error) {
	var s Settings
	path := filepath.Join(w.Orchestration(), SettingsFile)
	b, err := ReadRecord(path, MaxSettingsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return Settings{}, fmt.Errorf("%s is malformed: %w", path, err)
	}
	return s, nil
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
