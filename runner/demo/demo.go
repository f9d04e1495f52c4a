// Package demo sets up the offline demo: a fresh copy of the sample
// workspace, the seed guild and the embedded scripted model, configured the
// one way `guildhall demo` and the tests that replay it both need.
package demo

import (
	"fmt"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/runner/seed"
)

// ModelName is the name the scripted demo model reports in meters and
// records.
const ModelName = "scripted-demo"

// Demo is what a demo run is made of.
type Demo struct {
	Guild      *runner.Guild
	Deployment *runner.Deployment
	Provider   *provider.Scripted
}

// Setup copies the sample workspace into dir and builds the guild, the
// deployment and the scripted model, which replays its script at speed
// (0 is as fast as it can; 1 is the recorded pace).
func Setup(dir string, speed float64) (Demo, error) {
	if err := seed.CopyDemoWorkspace(dir); err != nil {
		return Demo{}, fmt.Errorf("demo workspace: %w", err)
	}
	g, err := runner.LoadGuild(seed.Guild(), "seed guild")
	if err != nil {
		return Demo{}, err
	}
	g.Path = "seed"
	g.ConventionalDocs = true
	script, err := provider.ParseScript(seed.DemoScript())
	if err != nil {
		return Demo{}, fmt.Errorf("demo script: %w", err)
	}
	d := runner.DefaultDeployment()
	d.FitToGuild(g)
	d.Model.Provider, d.Model.Name, d.Model.APIBase = "script", ModelName, ""
	// The script has no loop-detector turns: a cadence check would consume
	// turns it does not have.
	d.Executor.InterruptTriggers = nil
	return Demo{Guild: g, Deployment: d, Provider: provider.NewScripted(script, speed)}, nil
}
