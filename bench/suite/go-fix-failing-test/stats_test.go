package stats

import "testing"

func TestSum(t *testing.T) {
	if got := Sum([]int{4, 5, 6}); got != 15 {
		t.Errorf("Sum = %d, want 15", got)
	}
}

func TestMean(t *testing.T) {
	if got := Mean([]int{2, 4}); got != 3 {
		t.Errorf("Mean = %v, want 3", got)
	}
}
