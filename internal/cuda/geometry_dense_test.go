package cuda

import "testing"

// TestGemmGeometry checks that the GEMM grid covers every output tile of
// every problem within the launch limits (z loops in the kernels beyond
// 65,535 problems, so a capped z must still reach them by striding).
func TestGemmGeometry(t *testing.T) {
	cases := []struct{ m, n, batch int }{
		{1, 1, 1}, {64, 64, 1}, {65, 63, 3}, {70, 37, 3}, {32, 128 * 128 * 128, 32},
		{5, 1000, 70000}, {64, 27 * 64, 264}, {0, 0, 0},
	}
	for _, c := range cases {
		g := Gemm(c.m, c.n, c.batch)
		if g.Block != (Dim3{gemmThreads, 1, 1}) || gemmThreads != 16*16 || gemmTile != 4*16 {
			t.Fatalf("%+v: block %+v (the kernel maps 16x16 threads to 4x4 outputs each)", c, g.Block)
		}
		if g.Grid.X*gemmTile < c.n || g.Grid.Y*gemmTile < c.m {
			t.Fatalf("%+v: grid %+v does not cover the %dx%d output", c, g.Grid, c.m, c.n)
		}
		if g.Grid.X < 1 || g.Grid.Y < 1 || g.Grid.Z < 1 || g.Grid.X > 1<<31-1 || g.Grid.Y > maxGridY || g.Grid.Z > maxGridZ {
			t.Fatalf("%+v: grid %+v outside the launch limits", c, g.Grid)
		}
		if c.batch > 0 && g.Grid.Z != min(c.batch, maxGridZ) {
			t.Fatalf("%+v: grid z %d", c, g.Grid.Z)
		}
		// No wholly idle tile row or column.
		if c.n > 0 && (g.Grid.X-1)*gemmTile >= c.n || c.m > 0 && (g.Grid.Y-1)*gemmTile >= c.m {
			t.Fatalf("%+v: idle tiles in grid %+v", c, g.Grid)
		}
	}
	if gemmSharedBytes > 48<<10 {
		t.Fatalf("GEMM static shared memory %d bytes > 48 KiB", gemmSharedBytes)
	}
}

// TestSplitK checks that the K chunks tile [0, k) exactly, none empty,
// chunk a multiple of the stage depth, and that the split depends on the
// shapes only (the same call gives the same split).
func TestSplitK(t *testing.T) {
	for _, c := range []struct{ m, n, k int }{
		{1, 1, 1}, {64, 64, 100}, {64, 64, 511}, {64, 64, 513}, {70, 5, 111}, {64, 64, 32 * 128 * 128},
		{64, 64 * 27, 32 * 64 * 64 * 64}, {256, 256, 1 << 20}, {3, 4, 0}, {7, 9, 100000},
	} {
		s, ch := SplitK(c.m, c.n, c.k)
		if s2, ch2 := SplitK(c.m, c.n, c.k); s2 != s || ch2 != ch {
			t.Fatalf("%+v: not deterministic", c)
		}
		if s < 1 || ch < 1 || ch%gemmTileK != 0 || s > maxGridZ {
			t.Fatalf("%+v: splits %d, chunk %d", c, s, ch)
		}
		if c.k > 0 && (s*ch < c.k || (s-1)*ch >= c.k) {
			t.Fatalf("%+v: %d chunks of %d do not tile K exactly", c, s, ch)
		}
		if s > 1 && ch < splitKMinChunk {
			t.Fatalf("%+v: chunk %d shorter than %d", c, ch, splitKMinChunk)
		}
		tiles := ceilDiv(c.m, gemmTile) * ceilDiv(c.n, gemmTile)
		if s > 1 && (s-1)*tiles >= splitKTargetBlocks+tiles {
			t.Fatalf("%+v: %d splits of %d tiles overshoot %d blocks", c, s, tiles, splitKTargetBlocks)
		}
		if c.k >= 64*splitKMinChunk && tiles == 1 && s < 64 {
			t.Fatalf("%+v: a long reduction on one tile split only %d ways", c, s)
		}
	}
}

// TestSplitKSmall checks the small-channel weight gradient's chunks: they
// tile [0, k) exactly, none empty, a multiple of the stage depth, none
// shorter than smallMinChunk when split, at most splitKTargetBlocks
// blocks, and a long K (Burgers' 32 x 1024) split into many blocks.
func TestSplitKSmall(t *testing.T) {
	for _, k := range []int{0, 1, 31, 255, 256, 1200, 2048, 9000, 32 * 1024, 16 * 128 * 128, 1 << 26} {
		g, s, ch := SplitKSmall(k)
		if g.Grid != (Dim3{s, 1, 1}) || g.Block != (Dim3{gemmThreads, 1, 1}) {
			t.Fatalf("k=%d: geometry %+v for %d splits", k, g, s)
		}
		if s < 1 || ch < 1 || ch%smallStageK != 0 || s > splitKTargetBlocks {
			t.Fatalf("k=%d: splits %d, chunk %d", k, s, ch)
		}
		if k > 0 && (s*ch < k || (s-1)*ch >= k) {
			t.Fatalf("k=%d: %d chunks of %d do not tile K exactly", k, s, ch)
		}
		if s > 1 && ch < smallMinChunk {
			t.Fatalf("k=%d: chunk %d shorter than %d", k, ch, smallMinChunk)
		}
		if k >= 32*1024 && s < 100 {
			t.Fatalf("k=%d: a long reduction split only %d ways", k, s)
		}
	}
}

// TestSmallChannels checks which weight gradients take the small-channel
// kernel: U-HNO's channel counts do, anything beyond the shared slabs
// (64 channels) or the per-thread rows (8) does not.
func TestSmallChannels(t *testing.T) {
	for _, c := range []struct {
		m, n int
		want bool
	}{
		{3, 3, true}, {10, 10, true}, {20, 10, true}, {40, 40, true}, {24, 12, true}, {64, 32, true},
		{32, 64, true}, {64, 64, false}, {33, 64, false}, {65, 1, false}, {1, 65, false}, {0, 3, false}, {130, 70, false},
	} {
		if got := SmallChannels(c.m, c.n); got != c.want {
			t.Fatalf("SmallChannels(%d, %d) = %v", c.m, c.n, got)
		}
		if c.want && ceilDiv(c.m, min(c.m, gemmThreads/c.n)) > smallMaxRows {
			t.Fatalf("(%d, %d): more rows per thread than the kernel holds", c.m, c.n)
		}
	}
}

// TestMSEParts checks the first MSE pass: the chunks tile [0, n) with no
// empty block, at most maxMSEParts blocks, a power-of-two block.
func TestMSEParts(t *testing.T) {
	for _, n := range []int{0, 1, 255, 4096, 4097, 1 << 20, 1<<24 + 3, 1 << 30} {
		g, parts, chunk := MSEParts(n)
		if g.Grid.X != parts || g.Grid.Y != 1 || g.Grid.Z != 1 || parts < 1 || parts > maxMSEParts {
			t.Fatalf("n=%d: grid %+v, %d parts", n, g.Grid, parts)
		}
		if g.Block.X != mseBlock || mseBlock&(mseBlock-1) != 0 || MSEFinal().Block.X != mseBlock {
			t.Fatalf("n=%d: block %+v", n, g.Block)
		}
		if n > 0 && (parts*chunk < n || (parts-1)*chunk >= n) {
			t.Fatalf("n=%d: %d parts of %d leave values out or a part empty", n, parts, chunk)
		}
	}
}

// TestBiasParts checks the bias-gradient partition: the chunks tile each
// channel's [0, k) with no empty block, every channel has its grid row,
// the block matches the kernel's shared array.
func TestBiasParts(t *testing.T) {
	for _, c := range []struct{ c, k int }{{1, 1}, {70, 111}, {64, 32 * 128 * 128}, {3, 2048}, {1, 1 << 26}, {5, 0}, {512, 1 << 20}} {
		g, parts, chunk := BiasParts(c.c, c.k)
		if g.Grid.X != parts || g.Grid.Y != max(c.c, 1) || g.Grid.Y > maxGridY || g.Grid.Z != 1 || parts < 1 {
			t.Fatalf("%+v: grid %+v, %d parts", c, g.Grid, parts)
		}
		if g.Block.X != biasBlock || biasBlock != gemmThreads {
			t.Fatalf("%+v: block %+v (the kernel's shared array has %d entries)", c, g.Block, gemmThreads)
		}
		if c.k > 0 && (parts*chunk < c.k || (parts-1)*chunk >= c.k) {
			t.Fatalf("%+v: %d parts of %d leave values out or a part empty", c, parts, chunk)
		}
		if parts > 1 && chunk < biasMinChunk {
			t.Fatalf("%+v: chunk %d shorter than %d", c, chunk, biasMinChunk)
		}
		if c.k >= 64*biasMinChunk && c.c <= 16 && parts < 16 {
			t.Fatalf("%+v: a long reduction over few channels split only %d ways", c, parts)
		}
	}
}

// TestRowReduce checks the per-row reductions (MeanStd):
// every row has a block, and the block is a power of two (tree reduction)
// within the 1024-entry shared arrays of the kernels.
func TestRowReduce(t *testing.T) {
	for _, c := range []struct{ rows, n int }{{1, 1}, {96, 37}, {64, 32 * 128 * 128}, {70000, 5}, {3, 0}} {
		g := RowReduce(c.rows, c.n)
		b := g.Block.X
		if b&(b-1) != 0 || b < 32 || b > 1024 || g.Grid.X*g.Grid.Y < c.rows || g.Grid.X > 65535 || g.Grid.Y > maxGridY {
			t.Fatalf("%+v: %+v", c, g)
		}
	}
}

func TestPadSpatial(t *testing.T) {
	for _, c := range []struct {
		sp   []int
		want [3]int
	}{{[]int{8}, [3]int{1, 1, 8}}, {[]int{4, 6}, [3]int{1, 4, 6}}, {[]int{2, 4, 6}, [3]int{2, 4, 6}}} {
		if a, b, d := padSpatial(c.sp); [3]int{a, b, d} != c.want {
			t.Errorf("padSpatial(%v) = %v, want %v", c.sp, [3]int{a, b, d}, c.want)
		}
	}
}
