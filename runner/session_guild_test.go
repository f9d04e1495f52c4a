package runner

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/store"
)

// The console swaps the guild its probe chose before the first run; the
// run uses the new guild, and once a run has started the guild is fixed.
func TestSetGuildOnlyBeforeTheFirstRun(t *testing.T) {
	f := fakellm.New()
	defer f.Close()
	queueSimpleRun(f)
	s, dir := faultSession(t, f, ProviderHealth{})
	other, err := LoadGuild(os.DirFS("testdata/original"), "testdata/original")
	if err != nil {
		t.Fatal(err)
	}
	other.Path = "the swapped guild"
	if err := s.SetGuild(nil); err == nil {
		t.Error("SetGuild(nil) was accepted")
	}
	if err := s.SetGuild(other); err != nil {
		t.Fatalf("SetGuild before any run: %v", err)
	}
	if s.Guild() != other {
		t.Error("the session kept its old guild")
	}
	id, err := s.Submit(context.Background(), Submission{Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := store.Workspace{Dir: dir, Seal: testSealer(dir)}.ReadMeta(id)
	if err != nil {
		t.Fatal(err)
	}
	if m.GuildPath != "the swapped guild" {
		t.Errorf("the run recorded guild %q, want the swapped one", m.GuildPath)
	}
	if err := s.SetGuild(other); !errors.Is(err, ErrGuildFixed) {
		t.Errorf("SetGuild after a run: %v, want ErrGuildFixed", err)
	}
}
