package early

import (
	"slices"
	"testing"

	"github.com/light-fabric/lfinit/forward"
)

func TestCaughtIsWhatIsRelayed(t *testing.T) {
	if !slices.Equal(Caught, forward.Relayed) {
		t.Fatalf("early.Caught %v differs from forward.Relayed %v", Caught, forward.Relayed)
	}
}
