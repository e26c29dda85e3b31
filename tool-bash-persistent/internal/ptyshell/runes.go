package ptyshell

import "unicode/utf8"

// The clipper counts runes over every byte a command prints; these helpers do it eight bytes
// at a time while the text is ASCII, which most output is.

// asciiLen returns the length of the longest prefix of s that is ASCII.
func asciiLen[T string | []byte](s T) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if load64(s[i:i+8])&0x8080808080808080 != 0 {
			break
		}
	}
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// runeCount returns the number of runes in s, counting each byte of an invalid sequence as one
// (as utf8.RuneCount does).
func runeCount[T string | []byte](s T) int {
	n := 0
	for i := 0; i < len(s); {
		k := asciiLen(s[i:])
		n += k
		if i += k; i < len(s) {
			i += runeSize(s[i:])
			n++
		}
	}
	return n
}

// runeOffset returns the byte offset in s just past its first n runes (len(s) when s is
// shorter).
func runeOffset[T string | []byte](s T, n int) int {
	i := 0
	for n > 0 && i < len(s) {
		k := asciiLen(s[i:min(len(s), i+n)])
		i += k
		if n -= k; n > 0 && i < len(s) {
			i += runeSize(s[i:])
			n--
		}
	}
	return i
}

// lastRunes returns the byte offset in s where its last n runes start (0 when s has fewer).
func lastRunes(s string, n int) int {
	if k := len(s) - n; k >= 0 && asciiLen(s[k:]) == n {
		return k // ASCII: one byte a rune
	}
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}

// runeSize returns the length of the rune s starts with (1 for an invalid byte).
func runeSize[T string | []byte](s T) int {
	_, size := utf8.DecodeRuneInString(string(s[:min(len(s), utf8.UTFMax)]))
	return size
}

// load64 returns the first eight bytes of s as one little-endian word (one load: the compiler
// merges the byte loads once the bounds check on s[7] is done).
func load64[T string | []byte](s T) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
