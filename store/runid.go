package store

import (
	"fmt"
	"regexp"
	"sync"
	"time"
)

var runIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^run-[0-9]{8}-[0-9]{6}$`) })

// NewRunID formats t as a run id: run-YYYYMMDD-HHMMSS in UTC.
func NewRunID(t time.Time) string {
	return "run-" + t.UTC().Format("20060102-150405")
}

// ValidRunID reports whether id has the canonical run id form and names a
// real instant. Ids are validated on every read because they become paths.
func ValidRunID(id string) bool {
	if !runIDPattern().MatchString(id) {
		return false
	}
	_, err := time.Parse("20060102-150405", id[len("run-"):])
	return err == nil
}

// CheckRunID returns an error naming id when it is not canonical.
func CheckRunID(id string) error {
	if !ValidRunID(id) {
		return fmt.Errorf("run id %q is not of the form run-YYYYMMDD-HHMMSS", id)
	}
	return nil
}
