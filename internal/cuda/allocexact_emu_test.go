//go:build cudaemu && !cuda

package cuda

import (
	"strings"
	"testing"
)

// roundingDriver is the emulated driver asking for size classes, as the
// real driver does: the emulator's own driver always asks for exact sizes.
type roundingDriver struct{ driver }

func (roundingDriver) ExactSizes() bool { return false }

// TestAllocExact: $UHNO_ALLOC_EXACT=1 makes a driver that rounds (the
// real GPU's) allocate exact sizes; unset or 0 keeps the 512-byte size
// classes; the emulator's exact sizes cannot be switched off; a value
// that is not a boolean is refused when the backend opens.
func TestAllocExact(t *testing.T) {
	const floats = 3 // 12 bytes: a 512-byte block when rounded
	for _, c := range []struct {
		name     string
		rounding bool
		env      string
		want     int64
	}{
		{"GPU default", true, "", 512},
		{"GPU with 0", true, "0", 512},
		{"GPU with 1", true, "1", 4 * floats},
		{"GPU with true", true, "true", 4 * floats},
		{"emulator default", false, "", 4 * floats},
		{"emulator with 0", false, "0", 4 * floats},
	} {
		t.Run(c.name, func(t *testing.T) {
			drv, err := openDriver(0)
			if err != nil {
				t.Fatal(err)
			}
			if c.rounding {
				drv = roundingDriver{drv}
			}
			b, err := newBackend(drv, c.env)
			if err != nil {
				drv.Close()
				t.Fatal(err)
			}
			defer func() {
				if err := b.Close(); err != nil {
					t.Error(err)
				}
			}()
			s := b.Alloc(floats)
			if got := b.Memory().InUse; got != c.want {
				t.Errorf("$%s=%q: a %d-float tensor takes %d bytes, want %d", EnvAllocExact, c.env, floats, got, c.want)
			}
			b.Free(s)
		})
	}

	t.Run("New reads the variable", func(t *testing.T) {
		t.Setenv(EnvAllocExact, "1")
		b, err := New(0)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		b.Free(b.Alloc(floats))
		if got := b.Memory().Cached; got != 4*floats {
			t.Errorf("cached %d bytes, want %d", got, 4*floats)
		}
	})

	t.Run("bad value", func(t *testing.T) {
		t.Setenv(EnvAllocExact, "yes please")
		b, err := New(0)
		if err == nil {
			b.Close()
			t.Fatal("New accepted a bad value")
		}
		if !strings.Contains(err.Error(), EnvAllocExact) {
			t.Errorf("error does not name $%s: %v", EnvAllocExact, err)
		}
	})
}
