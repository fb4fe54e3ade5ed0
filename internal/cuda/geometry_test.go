package cuda

import "testing"

func TestElementwiseGeometry(t *testing.T) {
	for _, n := range []int{0, 1, 255, 256, 257, 1 << 20, 1 << 30} {
		g := Elementwise(n)
		if g.Block.X != 256 || g.Grid.X < 1 || g.Grid.X > maxElementwiseBlocks || g.Grid.Y != 1 || g.Grid.Z != 1 {
			t.Fatalf("n=%d: %+v", n, g)
		}
		// Every element is reached: one pass covers Threads, the grid-stride
		// loop covers the rest, and no block is wholly idle in the first pass.
		if g.Threads() < n && g.Grid.X != maxElementwiseBlocks {
			t.Fatalf("n=%d: %d threads and a grid below the cap", n, g.Threads())
		}
		if n > 0 && (g.Grid.X-1)*g.Block.X >= n {
			t.Fatalf("n=%d: last block idle (%+v)", n, g)
		}
	}
}

func TestPerRowGeometry(t *testing.T) {
	for _, c := range []struct{ rows, block int }{{1, 64}, {32, 2048}, {70000, 16}, {0, 128}} {
		g := PerRow(c.rows, c.block)
		if g.Grid.X*g.Grid.Y < c.rows || g.Grid.X > 65535 || g.Grid.Y > maxGridY {
			t.Fatalf("%+v: grid %+v", c, g.Grid)
		}
		if g.Block.X < 32 || g.Block.X > maxBlockThreads {
			t.Fatalf("%+v: block %+v", c, g.Block)
		}
	}
}

func TestReductionBlock(t *testing.T) {
	cases := []struct{ n, want int }{{1, 32}, {128, 32}, {129, 64}, {4096, 1024}, {1 << 20, 1024}}
	for _, c := range cases {
		if got := ReductionBlock(c.n); got != c.want {
			t.Errorf("ReductionBlock(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
