package config

import "strings"

// Nearest returns the candidate closest to name by Levenshtein distance, and
// whether it is close enough to be worth suggesting: at most max(2, len/2)
// edits, so that "optim.lrr" finds "optim.lr" but "foo" finds nothing. Ties
// go to the candidate sharing the longest prefix with name ("cfd" finds
// "cfd3d", not "ac2d"), then to the earlier candidate.
func Nearest(name string, candidates []string) (string, bool) {
	best, bestDist, bestPrefix := "", -1, 0
	for _, c := range candidates {
		d, p := levenshtein(name, c), commonPrefix(name, c)
		if bestDist < 0 || d < bestDist || (d == bestDist && p > bestPrefix) {
			best, bestDist, bestPrefix = c, d, p
		}
	}
	limit := max(2, len([]rune(name))/2)
	return best, bestDist >= 0 && bestDist <= limit
}

// suggestKey returns the valid key to suggest for an unknown dotted key:
// the only key with the same last segment in another section ("model.lr"
// -> "optim.lr"), or else the nearest key by edit distance among the keys
// at the same depth ("optimizer" -> "optim", not "optim.lr").
func suggestKey(key string, keys []string) (string, bool) {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		leaf := key[i:]
		var match []string
		for _, k := range keys {
			if strings.HasSuffix(k, leaf) {
				match = append(match, k)
			}
		}
		if len(match) == 1 {
			return match[0], true
		}
	}
	depth := strings.Count(key, ".")
	var same []string
	for _, k := range keys {
		if strings.Count(k, ".") == depth {
			same = append(same, k)
		}
	}
	if len(same) == 0 {
		same = keys
	}
	return Nearest(key, same)
}

// levenshtein returns the edit distance (insertions, deletions and
// substitutions of runes) between a and b.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// commonPrefix returns the number of leading runes a and b share.
func commonPrefix(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	n := 0
	for n < len(ra) && n < len(rb) && ra[n] == rb[n] {
		n++
	}
	return n
}
