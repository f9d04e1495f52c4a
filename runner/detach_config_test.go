package runner

import (
	"strings"
	"testing"
	"time"
)

func TestDetachIdleTimeoutIsChecked(t *testing.T) {
	for body, want := range map[string]string{
		"{\n  \"detach\": {\"idleTimeout\": \"soon\"}}": `deployment.json:2:29: detach.idleTimeout "soon" is not a duration such as "30m" or "24h"`,
		`{"detach": {"idleTimeout": "-5m"}}`:            `detach.idleTimeout "-5m" is negative`,
		`{"detach": {"idleTimeout": "10ms"}}`:           `detach.idleTimeout "10ms" is under a second`,
		`{"detach": {"idleTimeout": ""}}`:               "detach.idleTimeout is empty",
		`{"detach": {"idleTimeout": 30}}`:               "idleTimeout",
		`{"detach": {"idle": "30m"}}`:                   "idle",
	} {
		_, err := ParseDeployment("deployment.json", []byte(body))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "deployment.json:") {
			t.Errorf("%s: %v, want %q at a position", body, err, want)
		}
	}
	for body, want := range map[string]time.Duration{
		`{}`:                                   24 * time.Hour,
		`{"detach": {}}`:                       24 * time.Hour,
		`{"detach": {"idleTimeout": "0"}}`:     0,
		`{"detach": {"idleTimeout": "30m"}}`:   30 * time.Minute,
		`{"detach": {"idleTimeout": "2s"}}`:    2 * time.Second,
		`{"detach": {"idleTimeout": "1h30m"}}`: 90 * time.Minute,
	} {
		d, err := ParseDeployment("deployment.json", []byte(body))
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if got := d.Detach.Idle(); got != want {
			t.Errorf("%s: idle %s, want %s", body, got, want)
		}
	}
	if got := DefaultDeployment().Detach.Idle(); got != DefaultDetachIdle {
		t.Errorf("default idle %s", got)
	}
}
