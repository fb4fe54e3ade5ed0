package cuda

import "testing"

// TestStencilDk checks sm_backward_dk's geometry: the grid covers the
// cout x S cin output with no idle tile row or column, the K chunks tile
// [0, k) exactly (none empty, a multiple of the stage depth, none
// shorter than smMinChunk when split), one split per grid z within the
// launch limits, the block the kernel's 16 x 16 threads, and the split
// filling the device at GNO's profiled shape (NS-2D 128^2, batch 16,
// width 46, 8 offsets).
func TestStencilDk(t *testing.T) {
	for _, c := range []struct{ s, cout, cin, k int }{
		{2, 3, 2, 111}, {8, 46, 46, 16 * 128 * 128}, {26, 48, 48, 4 * 32 * 32 * 32}, {8, 66, 9, 15},
		{2, 50, 50, 32 * 1024}, {8, 1, 1, 1}, {8, 2, 3, 0}, {2, 2, 3, 1200}, {8, 2, 3, 960}, {1, 1, 1, 1 << 30},
	} {
		g, splits, chunk := StencilDk(c.s, c.cout, c.cin, c.k)
		if g2, s2, ch2 := StencilDk(c.s, c.cout, c.cin, c.k); g2 != g || s2 != splits || ch2 != chunk {
			t.Fatalf("%+v: not deterministic", c)
		}
		if g.Block != (Dim3{smThreads, 1, 1}) || smThreads != 16*16 || smTile != 4*16 || smStage != 16 {
			t.Fatalf("%+v: block %+v (the kernel maps 16x16 threads to 4x4 outputs, 16 k per stage)", c, g.Block)
		}
		n := c.s * c.cin
		if g.Grid.X*smTile < n || g.Grid.Y*smTile < c.cout || (n > 0 && (g.Grid.X-1)*smTile >= n) ||
			(c.cout > 0 && (g.Grid.Y-1)*smTile >= c.cout) || g.Grid.Y > maxGridY {
			t.Fatalf("%+v: grid %+v for a %dx%d output", c, g.Grid, c.cout, n)
		}
		if g.Grid.Z != splits || splits < 1 || splits > maxGridZ || chunk < smStage || chunk%smStage != 0 {
			t.Fatalf("%+v: grid %+v, %d splits of %d", c, g.Grid, splits, chunk)
		}
		if c.k > 0 && (splits*chunk < c.k || (splits-1)*chunk >= c.k) {
			t.Fatalf("%+v: %d chunks of %d do not tile K exactly", c, splits, chunk)
		}
		if splits > 1 && chunk < smMinChunk {
			t.Fatalf("%+v: chunk %d shorter than %d", c, chunk, smMinChunk)
		}
		if blocks := g.Grid.X * g.Grid.Y * splits; splits > 1 && blocks > smTargetBlocks+g.Grid.X*g.Grid.Y {
			t.Fatalf("%+v: %d blocks overshoot %d", c, blocks, smTargetBlocks)
		}
	}
	// The profiled shape: 6 column tiles x 88 splits, one wave on 132 SMs.
	if g, splits, _ := StencilDk(8, 46, 46, 16*128*128); g.Grid.X*g.Grid.Y*splits < 3*132 {
		t.Fatalf("NS-2D GNO: %+v x %d splits leaves SMs idle", g.Grid, splits)
	}
	// The emulator tests reach both paths: one split (K 111) and several.
	if _, s1, _ := StencilDk(2, 3, 2, 111); s1 != 1 {
		t.Fatalf("K 111: %d splits, want 1", s1)
	}
	if _, s4, _ := StencilDk(2, 3, 2, 1200); s4 < 2 {
		t.Fatalf("K 1200: %d splits, want several", s4)
	}
}

// TestStencilTiles checks the forward and dx grid: every output tile of
// every sample covered within the launch limits, no idle tile row or
// column, the block the kernels' 16 x 16 threads.
func TestStencilTiles(t *testing.T) {
	for _, c := range []struct{ m, n, batch int }{
		{1, 1, 1}, {46, 128 * 128, 16}, {66, 15, 1}, {3, 37, 3}, {48, 32 * 32 * 32, 4}, {5, 100, 70000}, {0, 0, 0},
	} {
		g := StencilTiles(c.m, c.n, c.batch)
		if g.Block != (Dim3{smThreads, 1, 1}) {
			t.Fatalf("%+v: block %+v", c, g.Block)
		}
		if g.Grid.X*smTile < c.n || g.Grid.Y*smTile < c.m || g.Grid.Y > maxGridY || g.Grid.Z > maxGridZ ||
			g.Grid.X < 1 || g.Grid.Y < 1 || g.Grid.Z < 1 || (c.batch > 0 && g.Grid.Z != min(c.batch, maxGridZ)) {
			t.Fatalf("%+v: grid %+v", c, g.Grid)
		}
		if c.n > 0 && (g.Grid.X-1)*smTile >= c.n || c.m > 0 && (g.Grid.Y-1)*smTile >= c.m {
			t.Fatalf("%+v: idle tiles in grid %+v", c, g.Grid)
		}
	}
}
