package sandbox

import (
	"testing"

	"github.com/dsh-go/dsh/internal/leaktest"
)

// TestMain checks that no goroutine (the ready thread included), descriptor (a ruleset) or child
// outlives the tests.
func TestMain(m *testing.M) { leaktest.Main(m, leaktest.Options{}) }
