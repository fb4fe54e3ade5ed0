package alloc

import (
	"errors"
	"testing"
)

// fakeDevice hands out increasing addresses and tracks live blocks.
type fakeDevice struct {
	next  uintptr
	live  map[uintptr]int64
	limit int64 // bytes the device holds; 0: unlimited
	used  int64
}

func newFake(limit int64) *fakeDevice {
	return &fakeDevice{next: 0x1000, live: map[uintptr]int64{}, limit: limit}
}

func (d *fakeDevice) Malloc(n int64) (uintptr, error) {
	if d.limit > 0 && d.used+n > d.limit {
		return 0, errors.New("out of memory")
	}
	p := d.next
	d.next += uintptr(n)
	d.live[p] = n
	d.used += n
	return p, nil
}

func (d *fakeDevice) Free(p uintptr) error {
	n, ok := d.live[p]
	if !ok {
		return errors.New("double free")
	}
	delete(d.live, p)
	d.used -= n
	return nil
}

func TestClass(t *testing.T) {
	cases := []struct{ n, want int64 }{
		{1, 512}, {512, 512}, {513, 1024}, {1 << 20, 1 << 20},
		{1<<20 + 1, 1<<20 + 1<<17}, {3 << 20, 3 << 20}, {(3 << 20) + 1, (3 << 20) + 1<<18}, {1 << 30, 1 << 30},
	}
	for _, c := range cases {
		if got := Class(c.n); got != c.want {
			t.Errorf("Class(%d) = %d, want %d", c.n, got, c.want)
		}
		if got := Class(c.n); got < c.n || float64(got-c.n) > 0.125*float64(c.n)+512 {
			t.Errorf("Class(%d) = %d wastes more than 12.5%%", c.n, got)
		}
	}
}

// TestSteadyState: a repeated pattern of allocations (one training step)
// reaches the device only in the first round; later rounds are all hits
// and get the same addresses back.
func TestSteadyState(t *testing.T) {
	d := newFake(0)
	c := New(d)
	sizes := []int64{4096, 100, 1 << 22, 4096, 77777}
	var first []uintptr
	for round := range 5 {
		var got []uintptr
		for _, n := range sizes {
			p, err := c.Get(n)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, p)
		}
		for i := len(got) - 1; i >= 0; i-- { // free in reverse, as a tape does
			c.Put(got[i])
		}
		if round == 0 {
			first = got
			continue
		}
		for i := range got {
			if got[i] != first[i] {
				t.Fatalf("round %d: block %d at 0x%x, first round 0x%x", round, i, got[i], first[i])
			}
		}
	}
	st := c.Stats()
	if st.Mallocs != int64(len(sizes)) || st.Hits != 4*int64(len(sizes)) || st.InUse != 0 {
		t.Fatalf("stats %+v", st)
	}
	var total int64
	for _, n := range sizes {
		total += Class(n)
	}
	if st.Cached != total || st.Peak != total {
		t.Fatalf("cached %d, peak %d, want %d", st.Cached, st.Peak, total)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if len(d.live) != 0 || c.Stats().Cached != 0 || c.Stats().Frees != int64(len(sizes)) {
		t.Fatalf("after Release: %d live device blocks, stats %+v", len(d.live), c.Stats())
	}
}

// TestOutOfMemoryRetries: when the device is full of cached blocks of
// other classes, Get releases them and succeeds.
func TestOutOfMemoryRetries(t *testing.T) {
	d := newFake(8192)
	c := New(d)
	a, _ := c.Get(4096)
	b, _ := c.Get(4096)
	c.Put(a)
	c.Put(b)
	p, err := c.Get(8192)
	if err != nil {
		t.Fatalf("Get after a full cache: %v", err)
	}
	if st := c.Stats(); st.InUse != 8192 || st.Cached != 0 || st.Frees != 2 {
		t.Fatalf("stats %+v", st)
	}
	c.Put(p)
	if _, err := c.Get(1 << 20); err == nil {
		t.Fatal("a request larger than the device succeeded")
	}
}

func TestPutForeignPanics(t *testing.T) {
	c := New(newFake(0))
	p, _ := c.Get(10)
	c.Put(p)
	defer func() {
		if recover() == nil {
			t.Fatal("double Put did not panic")
		}
	}()
	c.Put(p)
}
