package cpu

import "testing"

func TestTmpISA(t *testing.T) { t.Logf("best isa %d", gaussBestISA()) }
