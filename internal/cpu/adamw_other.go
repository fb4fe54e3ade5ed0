//go:build !(cgo && amd64)

package cpu

// Without cgo on amd64 AdamW runs the scalar adamwGo.

const haveFastAdamW = false

func adamwFast(p, g, m, v []float32, k *adamwConsts) { adamwGo(p, g, m, v, k) }

func adamwLevel(level int, p, g, m, v []float32, k *adamwConsts) bool { return false }
