package model

import (
	"strings"
	"testing"
)

// convFNOCountFormula is the parameter count written out from the
// architecture (ConvFNO's comment), independent of the builder.
func convFNOCountFormula(s ConvFNOSpec) int {
	d, w := s.Dim, s.Width
	c := func(l int) int { return s.UNetWidth << l }
	n := conv3Count(d, s.InChannels, c(0))
	for l := 1; l < s.UNetLevels; l++ {
		n += conv3Count(d, c(l-1), c(l)) + conv3Count(d, c(l), c(l))
	}
	for l := 0; l < s.UNetLevels-1; l++ {
		n += conv3Count(d, c(l+1)+c(l), c(l))
	}
	n += (s.InChannels+c(0))*w + w
	n += s.Blocks * (ipow(2, d-1)*w*w*ipow(s.K0, d)*2 + w*w + w)
	return n + w*s.ProjHidden + s.ProjHidden + s.ProjHidden*s.OutChannels + s.OutChannels
}

// convFNONames is the parameter layout of a Conv-FNO with a 3-level U-Net
// and 2 blocks.
var convFNONames = []string{"unet.enc.0.w", "unet.enc.0.b",
	"unet.enc.1.down.w", "unet.enc.1.down.b", "unet.enc.1.conv.w", "unet.enc.1.conv.b",
	"unet.enc.2.down.w", "unet.enc.2.down.b", "unet.enc.2.conv.w", "unet.enc.2.conv.b",
	"unet.dec.1.w", "unet.dec.1.b", "unet.dec.0.w", "unet.dec.0.b", "lift.w", "lift.b",
	"block.0.spectral.w", "block.0.w.w", "block.0.w.b", "block.1.spectral.w", "block.1.w.w", "block.1.w.b",
	"proj.0.w", "proj.0.b", "proj.1.w", "proj.1.b"}

// TestConvFNOBudget: the reference spec is the paper's (FNO width 32, a
// 4-level U-Net from width 16), the fixed U-Net's share at 0.62M is
// logged (the fit itself: TestRegistryContract), and a budget below the
// fixed U-Net fails and says so.
func TestConvFNOBudget(t *testing.T) {
	target := 620000
	for _, c := range budgetTasks {
		s, err := SpecFromConfig(taskConfig(t, c.task), c.in, 1)
		if err != nil {
			t.Fatal(err)
		}
		ref := ConvFNOSpecFor(s)
		if ref.Width != 32 || ref.UNetWidth != 16 || ref.UNetLevels != 4 || ref.Blocks != 4 || ref.K0 != s.K0 {
			t.Errorf("%s: reference spec %+v", c.task, ref)
		}
		a, err := ConvFNOForBudget(ref, target)
		if err != nil {
			t.Fatalf("%s: %v", c.task, err)
		}
		n := CountConvFNO(a)
		unet := n - CountFNO(FNOSpec{Dim: a.Dim, InChannels: a.InChannels + 16, OutChannels: a.OutChannels, Width: a.Width, K0: a.K0, Blocks: 4, ProjHidden: a.ProjHidden})
		t.Logf("%s: FNO width %d, %d parameters, of which the U-Net %d; reference width 32: %d", c.task, a.Width, n, unet, CountConvFNO(ref))
	}
	s, _ := SpecFromConfig(taskConfig(t, "ns2d"), 10, 1)
	if _, err := ConvFNOForBudget(ConvFNOSpecFor(s), 200000); err == nil || !strings.Contains(err.Error(), "U-Net") {
		t.Errorf("a 200k budget in 2D: err %v, want the U-Net's count", err)
	}
}
