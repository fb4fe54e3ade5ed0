package cuda

import "testing"

// TestBandAxisGeometry checks that br_axis's grid covers every output
// tile of every problem within the launch limits (the kernel strides over
// y and z beyond the grid, so a capped axis still reaches every tile),
// with no wholly idle tile column, and the block the kernel is written
// for.
func TestBandAxisGeometry(t *testing.T) {
	cases := []struct{ lines, rows, post int }{
		{1, 1, 1}, {96, 256, 128}, {96 * 256, 256, 1}, {67, 70, 1}, {3, 66, 5},
		{1360, 16, 8}, {1360 * 256 * 256, 128, 1}, {70000, 9, 67}, {0, 0, 0}, {5, 0, 1},
	}
	for _, c := range cases {
		g := BandAxis(c.lines, c.rows, c.post)
		if g.Block != (Dim3{bandThreads, 1, 1}) || bandThreads != 16*16 || bandTile != 4*16 {
			t.Fatalf("%+v: block %+v (the kernel maps 16x16 threads to 4x4 outputs each)", c, g.Block)
		}
		if g.Grid.X < 1 || g.Grid.Y < 1 || g.Grid.Z < 1 || g.Grid.X > 1<<31-1 || g.Grid.Y > maxGridY || g.Grid.Z > maxGridZ {
			t.Fatalf("%+v: grid %+v outside the launch limits", c, g.Grid)
		}
		m, n, problems := c.rows, c.post, c.lines
		if c.post == 1 {
			m, n, problems = c.lines, c.rows, 1
		}
		if g.Grid.X*bandTile < n {
			t.Fatalf("%+v: grid %+v does not cover the %d columns", c, g.Grid, n)
		}
		if g.Grid.Y*bandTile < m && g.Grid.Y != maxGridY || problems > 0 && g.Grid.Z != min(problems, maxGridZ) {
			t.Fatalf("%+v: grid %+v: rows %d and problems %d neither covered nor capped", c, g.Grid, m, problems)
		}
		if n > 0 && (g.Grid.X-1)*bandTile >= n || m > 0 && (g.Grid.Y-1)*bandTile >= m {
			t.Fatalf("%+v: idle tiles in grid %+v", c, g.Grid)
		}
	}
}
