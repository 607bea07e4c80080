package step

import "testing"

func TestNumbers(t *testing.T) {
	for _, n := range []int{0, 3, 10, 4194304} {
		if got := atoi(itoa(n)); got != n {
			t.Errorf("atoi(itoa(%d)) = %d", n, got)
		}
	}
	for _, s := range []string{"", "-1", "3x", "99999999999"} {
		if got := atoi(s); got != -1 {
			t.Errorf("atoi(%q) = %d, want -1", s, got)
		}
	}
}
