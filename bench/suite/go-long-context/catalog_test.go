package catalog

import "testing"

func TestWeights(t *testing.T) {
	for _, p := range Parts {
		if p.Weight != p.ID*37%1000 {
			t.Errorf("part %d (%s): weight %d, want %d", p.ID, p.Name, p.Weight, p.ID*37%1000)
		}
	}
	if len(Parts) != 800 {
		t.Errorf("%d parts, want 800", len(Parts))
	}
}
