package bench

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/guildhall/guildhall/internal/sandboxtest"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// BenchmarkStarterSuiteOffline plays the whole starter suite with the
// seed guild on the scripted model, at 1, 2 and 4 jobs: the harness's own
// cost (copies, sessions, sandboxes, validations) with a model that costs
// nothing. The build cache is warm after the first iteration.
func BenchmarkStarterSuiteOffline(b *testing.B) {
	benches, g, d := starterSeed(b)
	host := sandbox.NewHost()
	work := b.TempDir()
	for _, jobs := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			for b.Loop() {
				h := &Harness{Variants: []Variant{{Name: "seed", Guild: g, Deployment: d, Provider: OwnScript}},
					Host: host, Policy: sandboxtest.Policy(b, host), Path: ScopedPath(os.Getenv("PATH")), Jobs: jobs, Effort: "quick",
					Sealer: func(dir string) (*store.Sealer, error) { return store.NewSealer(testKey, dir), nil }, WorkDir: work}
				rep, err := h.Run(context.Background(), starterSuite, benches)
				if err != nil {
					b.Fatal(err)
				}
				if a := Sum(rep.Results); a.Passes != len(benches) {
					b.Fatalf("%d of %d passed", a.Passes, len(benches))
				}
			}
		})
	}
}
