package labelset

import (
	"testing"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/seed"
)

func TestSeedGuildLabels(t *testing.T) {
	g, err := runner.LoadGuild(seed.Guild(), "seed")
	if err != nil {
		t.Fatal(err)
	}
	set, err := FromGuild(g)
	if err != nil {
		t.Fatalf("the seed guild's visualization must parse: %v", err)
	}
	res := render.NewLabelResolver(set, render.TierFriendly)
	p := render.Participant{ID: "coder-1-3", Role: "coder", Kind: render.KindRole, RoleID: "coder-1-3"}
	friendly := res.ParticipantLabel(p)
	detailed := res.WithTier(render.TierDetailed).ParticipantLabel(p)
	if friendly == "" || detailed == "" || friendly == detailed {
		t.Fatalf("coder labels: friendly %q detailed %q; the seed guild gives distinct tiers", friendly, detailed)
	}
	if want := g.Roles["coder"].Label.Friendly[0]; friendly != want {
		t.Fatalf("friendly coder label = %q, want the guild's %q", friendly, want)
	}
	tool := render.Participant{ID: "tool:read_file", Role: "read_file", Kind: render.KindTool}
	if got, want := res.ParticipantLabel(tool), g.Manifests["read_file"].HumanLabel.Friendly[0]; got != want {
		t.Fatalf("read_file label = %q, want %q", got, want)
	}
}
