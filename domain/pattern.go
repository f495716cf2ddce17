package domain

// Match reports whether pattern matches s whole. '*' matches any run of
// characters ('/' and ':' included); every other character matches itself,
// case-sensitively (SPEC §2).
func Match(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// MatchAny returns the first pattern that matches s, and whether one did.
func MatchAny(patterns []string, s string) (string, bool) {
	for _, p := range patterns {
		if Match(p, s) {
			return p, true
		}
	}
	return "", false
}
