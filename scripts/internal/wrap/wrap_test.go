package wrap

import "testing"

func TestMask(t *testing.T) {
	tests := []struct{ in, want string }{
		{"---\nk: v\n---\ntext\n", "\n\n\ntext\n"},
		{"---\nnever closed\ntext\n", "---\nnever closed\ntext\n"},
		{"text\n---\nk\n---\n", "text\n---\nk\n---\n"},
		{"::: tip\nbody\n  :::\n", "\nbody\n\n"},
		{"---\r\nk: v\r\n---\r\nx", "\r\n\r\n\r\nx"},
		{"plain", "plain"},
	}
	for _, tt := range tests {
		if got := string(Mask([]byte(tt.in))); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
