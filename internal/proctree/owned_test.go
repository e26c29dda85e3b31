package proctree

import "testing"

// TestHold: only the release of the last open holder reports last, whatever the order, and a
// second release of one holder reports false and changes nothing.
func TestHold(t *testing.T) {
	a, b := Hold(), Hold()
	if a() {
		t.Error("the first of two holders to close was told it is the last")
	}
	if a() {
		t.Error("a second release of a closed holder reported last")
	}
	c := Hold()
	if b() {
		t.Error("a holder closing while another is open was told it is the last")
	}
	if !c() {
		t.Error("the last holder to close was not told so")
	}
	if c() {
		t.Error("a second release of the last holder reported last again")
	}
	d := Hold()
	if !d() {
		t.Error("a lone holder was not told it is the last")
	}
}
