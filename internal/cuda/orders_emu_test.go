//go:build cudaemu && !cuda

package cuda

import (
	"fmt"
	"math"
	"os"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/cuda/emu"
	"uhno/internal/tensor"
)

// TestSameBitsUnderEveryThreadOrder runs every operation, forward and
// backward, under the emulator's thread orders (forward, reverse, two
// shuffles) and requires identical bits from all of them. Every kernel of
// the backend promises this: no floating-point atomics, reductions in
// fixed trees with a barrier between levels. A missing __syncthreads or a
// race on shared memory lets one order read a value another order has
// not written yet, and the bits differ (or, with the NaN the emulator
// fills fresh shared and device memory with, turn into NaN).
//
// Emulator only: a GPU picks its own order, which the other tests cover.
func TestSameBitsUnderEveryThreadOrder(t *testing.T) {
	ref := cpu.New(1)
	orders := []struct {
		o    emu.Order
		seed uint64
	}{{emu.Forward, 0}, {emu.Reverse, 0}, {emu.Shuffle, 1}, {emu.Shuffle, 2}}
	defer restoreOrder(t)

	// Each case allocates its outputs, runs, and returns them.
	type run func() []*tensor.Tensor
	spar := tensor.DefaultSPAR
	cases := []struct {
		name string
		f    run
	}{}
	add := func(name string, f run) {
		cases = append(cases, struct {
			name string
			f    run
		}{name, f})
	}

	for _, sh := range shapes1to3 {
		d := len(sh) - 2
		sp := sh[2:]
		b, c := sh[0], sh[1]
		x := rnd(ref, 1, sh...)
		name := fmt.Sprintf("%dD", d)

		w := rnd(ref, 2, 6, c)
		bias := rnd(ref, 3, 6)
		ysh := append([]int{b, 6}, sp...)
		dy := rnd(ref, 4, ysh...)
		add(name+" Pointwise", func() []*tensor.Tensor {
			y := both(ref, nil, ysh...)
			dx, dw, db := gradPair(ref, 5, sh...), gradPair(ref, 6, 6, c), gradPair(ref, 7, 6)
			gpu.Pointwise(y.g, x.g, w.g, bias.g)
			gpu.PointwiseBackward(dx.g, dw.g, db.g, dy.g, x.g, w.g)
			return []*tensor.Tensor{y.g, dx.g, dw.g, db.g}
		})

		half := make([]int, d)
		ksh := []int{6, c}
		for i, n := range sp {
			half[i] = (n + 1) / 2
			ksh = append(ksh, 3)
		}
		wd := rnd(ref, 8, ksh...)
		dsh := append([]int{b, 6}, half...)
		ddy := rnd(ref, 9, dsh...)
		add(name+" ConvDown", func() []*tensor.Tensor {
			y := both(ref, nil, dsh...)
			dx, dw, db := gradPair(ref, 10, sh...), gradPair(ref, 11, ksh...), gradPair(ref, 12, 6)
			gpu.ConvDown(y.g, x.g, wd.g, bias.g)
			gpu.ConvDownBackward(dx.g, dw.g, db.g, ddy.g, x.g, wd.g)
			return []*tensor.Tensor{y.g, dx.g, dw.g, db.g}
		})

		// bf16 autocast: the GEMM's rounding pass over each stage sits
		// between two barriers of its own.
		add(name+" Pointwise+ConvDown bf16", func() []*tensor.Tensor {
			if err := gpu.SetPrecision(BF16); err != nil {
				t.Fatal(err)
			}
			defer gpu.SetPrecision(FP32)
			y, yd := both(ref, nil, ysh...), both(ref, nil, dsh...)
			dx, dw, db := gradPair(ref, 5, sh...), gradPair(ref, 6, 6, c), gradPair(ref, 7, 6)
			gpu.Pointwise(y.g, x.g, w.g, bias.g)
			gpu.PointwiseBackward(dx.g, dw.g, db.g, dy.g, x.g, w.g)
			gpu.ConvDown(yd.g, x.g, wd.g, bias.g)
			gpu.ConvDownBackward(dx.g, nil, nil, ddy.g, x.g, wd.g)
			return []*tensor.Tensor{y.g, dx.g, dw.g, db.g, yd.g}
		})

		dws := tensor.DepthwiseWeightShape(d, c)
		wdw, bdw := rnd(ref, 34, dws...), rnd(ref, 35, c)
		ddw := rnd(ref, 36, sh...)
		add(name+" DepthwiseConv", func() []*tensor.Tensor {
			y := both(ref, nil, sh...)
			dx, dw, db := gradPair(ref, 37, sh...), gradPair(ref, 38, dws...), gradPair(ref, 39, c)
			gpu.DepthwiseConv(y.g, x.g, wdw.g, bdw.g)
			gpu.DepthwiseConvBackward(dx.g, dw.g, db.g, ddw.g, x.g, wdw.g)
			return []*tensor.Tensor{y.g, dx.g, dw.g, db.g}
		})

		// The wavelet ops need axes that are multiples of 2^levels.
		wsh := append([]int{b, c}, [][]int{{40}, {16, 8}, {8, 8, 16}}[d-1]...)
		xw, dyw := rnd(ref, 40, wsh...), rnd(ref, 41, wsh...)
		for _, inverse := range []bool{false, true} {
			add(fmt.Sprintf("%s Wavelet inverse=%v", name, inverse), func() []*tensor.Tensor {
				y, dx := both(ref, nil, wsh...), gradPair(ref, 42, wsh...)
				gpu.Wavelet(y.g, xw.g, 3, inverse)
				gpu.WaveletBackward(dx.g, dyw.g, 3, inverse)
				return []*tensor.Tensor{y.g, dx.g}
			})
		}
		corner := make([]int, d)
		for i, n := range wsh[2:] {
			corner[i] = n / 4
		}
		wmsh := tensor.WaveletMixShape(c, 6, corner)
		wm := rnd(ref, 43, wmsh...)
		ymsh := append([]int{b, 6}, wsh[2:]...)
		dym := rnd(ref, 44, ymsh...)
		add(name+" WaveletMix", func() []*tensor.Tensor {
			y := both(ref, nil, ymsh...)
			dx, dw := gradPair(ref, 45, wsh...), gradPair(ref, 46, wmsh...)
			gpu.WaveletMix(y.g, xw.g, wm.g)
			gpu.WaveletMixBackward(dx.g, dw.g, dym.g, xw.g, wm.g)
			return []*tensor.Tensor{y.g, dx.g, dw.g}
		})

		c3s := tensor.Conv3WeightShape(d, c, 6)
		wc3 := rnd(ref, 40, c3s...)
		add(name+" Conv3", func() []*tensor.Tensor {
			y := both(ref, nil, ysh...)
			dx, dw, db := gradPair(ref, 41, sh...), gradPair(ref, 42, c3s...), gradPair(ref, 43, 6)
			gpu.Conv3(y.g, x.g, wc3.g, bias.g)
			gpu.Conv3Backward(dx.g, dw.g, db.g, dy.g, x.g, wc3.g)
			return []*tensor.Tensor{y.g, dx.g, dw.g, db.g}
		})
		stOff := tensor.MooreStencil(d)
		var stFlat []int
		for _, o := range stOff {
			stFlat = append(stFlat, o...)
		}
		sks := []int{len(stOff), 6 * c, 1}
		kst := rnd(ref, 45, sks...)
		for _, periodic := range []bool{true, false} {
			add(fmt.Sprintf("%s StencilMessage periodic=%v", name, periodic), func() []*tensor.Tensor {
				y := both(ref, nil, ysh...)
				dx, dk := gradPair(ref, 46, sh...), gradPair(ref, 47, sks...)
				gpu.StencilMessage(y.g, x.g, kst.g, stFlat, periodic)
				gpu.StencilMessageBackward(dx.g, dk.g, dy.g, x.g, kst.g, stFlat, periodic)
				return []*tensor.Tensor{y.g, dx.g, dk.g}
			})
		}
		add(name+" ReLU", func() []*tensor.Tensor {
			y, dx := both(ref, nil, sh...), gradPair(ref, 44, sh...)
			gpu.ReLU(y.g, x.g)
			gpu.ReLUBackward(dx.g, ddw.g, x.g)
			return []*tensor.Tensor{y.g, dx.g}
		})
		bup := append([]int{b, c}, sp...)
		for i := range bup[2:] {
			bup[2+i] = 2*bup[2+i] + 1 - i // up on some axes, odd sizes
		}
		dbr := rnd(ref, 45, bup...)
		add(name+" BandResample", func() []*tensor.Tensor {
			y, dx := both(ref, nil, bup...), gradPair(ref, 46, sh...)
			gpu.BandResample(y.g, x.g)
			gpu.BandResampleBackward(dx.g, dbr.g)
			return []*tensor.Tensor{y.g, dx.g}
		})

		up := append([]int{b, c}, sp...)
		for i := range up[2:] {
			up[2+i] *= 2
		}
		dup := rnd(ref, 13, up...)
		add(name+" Upsample2x", func() []*tensor.Tensor {
			y, dx := both(ref, nil, up...), gradPair(ref, 14, sh...)
			gpu.Upsample2x(y.g, x.g, false)
			gpu.Upsample2xBackward(dx.g, dup.g, false)
			return []*tensor.Tensor{y.g, dx.g}
		})
		add(name+" Upsample2x periodic", func() []*tensor.Tensor {
			y, dx := both(ref, nil, up...), gradPair(ref, 14, sh...)
			gpu.Upsample2x(y.g, x.g, true)
			gpu.Upsample2xBackward(dx.g, dup.g, true)
			return []*tensor.Tensor{y.g, dx.g}
		})

		ws := tensor.SpectralWeightShape(d, c, 6, 4)
		wsp := rnd(ref, 15, ws...)
		add(name+" SpectralConv", func() []*tensor.Tensor {
			y := both(ref, nil, ysh...)
			dx, dw := gradPair(ref, 16, sh...), gradPair(ref, 17, ws...)
			gpu.SpectralConv(y.g, x.g, wsp.g, 4, tensor.FirstModes(4, sp[d-1]))
			gpu.SpectralConvBackward(dx.g, dw.g, dy.g, x.g, wsp.g, 4, tensor.FirstModes(4, sp[d-1]))
			return []*tensor.Tensor{y.g, dx.g, dw.g}
		})

		modes := tensor.LogModes(4, sp[d-1])
		if len(modes) > 1 {
			modes = modes[1:] // skip DC: the DC plane's symmetrisation then has nothing to mix
		}
		add(name+" SpectralConv list", func() []*tensor.Tensor {
			var out []*tensor.Tensor
			for _, list := range [][]int{tensor.LogModes(4, sp[d-1]), modes} {
				y := both(ref, nil, ysh...)
				dx, dw := gradPair(ref, 16, sh...), gradPair(ref, 17, ws...)
				gpu.SpectralConv(y.g, x.g, wsp.g, 4, list)
				gpu.SpectralConvBackward(dx.g, dw.g, dy.g, x.g, wsp.g, 4, list)
				out = append(out, y.g, dx.g, dw.g)
			}
			return out
		})

		us, vs := tensor.SpectralWeightShape(d, c, 3, 4), tensor.SpectralWeightShape(d, 3, 6, 4)
		wu, wv := rnd(ref, 41, us...), rnd(ref, 42, vs...)
		add(name+" LowRankSpectralConv", func() []*tensor.Tensor {
			y := both(ref, nil, ysh...)
			dx, du, dv := gradPair(ref, 43, sh...), gradPair(ref, 44, us...), gradPair(ref, 45, vs...)
			gpu.LowRankSpectralConv(y.g, x.g, wu.g, wv.g, 4)
			gpu.LowRankSpectralConvBackward(dx.g, du.g, dv.g, dy.g, x.g, wu.g, wv.g, 4)
			return []*tensor.Tensor{y.g, dx.g, du.g, dv.g}
		})

		{
			scales := 1
			if c%2 == 0 {
				scales = 2
			} else if c%3 == 0 {
				scales = 3
			}
			ls := both(ref, gaussLogSigmaVals([]float64{0.6, 1.4, 2.2}[:scales], 1, 0.02), scales, 1)
			gdy := rnd(ref, 18, sh...)
			opt := tensor.GaussOpts{Normalize: true, MaxRadius: 4}
			add(name+" GaussianConv", func() []*tensor.Tensor {
				y, dx, dls := both(ref, nil, sh...), gradPair(ref, 19, sh...), gradPair(ref, 20, scales, 1)
				gpu.GaussianConv(y.g, x.g, ls.g, opt)
				gpu.GaussianConvBackward(dx.g, dls.g, gdy.g, x.g, ls.g, opt)
				return []*tensor.Tensor{y.g, dx.g, dls.g}
			})
		}

		add(name+" MeanStd", func() []*tensor.Tensor {
			m, s := both(ref, nil, b, c), both(ref, nil, b, c)
			gpu.MeanStd(m.g, s.g, x.g)
			dm, ds, dx := rnd(ref, 21, b, c), rnd(ref, 22, b, c), gradPair(ref, 23, sh...)
			gpu.MeanStdBackward(dx.g, dm.g, ds.g, x.g, m.g, s.g)
			return []*tensor.Tensor{m.g, s.g, dx.g}
		})

		ssh := append([]int{b, 1}, sp...)
		score := rnd(ref, 24, ssh...)
		zf, zg := rnd(ref, 25, sh...), rnd(ref, 26, sh...)
		add(name+" SPAR", func() []*tensor.Tensor {
			hard, stats, mask := both(ref, nil, ssh...), both(ref, nil, b, 3), both(ref, nil, ssh...)
			gpu.SPARKeep(hard.g, stats.g, score.g, spar)
			k := make([]int, b)
			for i := range k {
				k[i] = 1 + i*3
			}
			gpu.TopKMask(mask.g, score.g, k)
			r := both(ref, nil, sh...)
			gpu.SPARRoute(r.g, zf.g, zg.g, hard.g)
			dzf, dzg, ds := gradPair(ref, 27, sh...), gradPair(ref, 28, sh...), gradPair(ref, 29, ssh...)
			gpu.SPARRouteBackward(dzf.g, dzg.g, ds.g, zf.g, zf.g, zg.g, hard.g, score.g, float32(spar.Temperature), tensor.CentreZero)
			dst := gradPair(ref, 31, ssh...)
			gpu.SPARRouteBackward(nil, nil, dst.g, zf.g, zf.g, zg.g, hard.g, score.g, float32(spar.Temperature), tensor.CentreThreshold)
			return []*tensor.Tensor{hard.g, stats.g, mask.g, r.g, dzf.g, dzg.g, ds.g, dst.g}
		})

		other := rnd(ref, 30, sh...)
		add(name+" MSE", func() []*tensor.Tensor {
			o := both(ref, nil, 1)
			gpu.MSE(o.g, x.g, other.g)
			da, db := gradPair(ref, 31, sh...), gradPair(ref, 32, sh...)
			dout := both(ref, []float32{0.7}, 1)
			gpu.MSEBackward(da.g, db.g, dout.g, x.g, other.g)
			return []*tensor.Tensor{o.g, da.g, db.g}
		})

		add(name+" Diff", func() []*tensor.Tensor {
			var out []*tensor.Tensor
			for axis := range d {
				for _, periodic := range []bool{true, false} {
					y, dx := both(ref, nil, sh...), gradPair(ref, 33, sh...)
					gpu.Diff(y.g, x.g, axis, 0.1, periodic)
					gpu.DiffBackward(dx.g, other.g, axis, 0.1, periodic)
					out = append(out, y.g, dx.g)
				}
			}
			return out
		})
	}
	n := 3001
	pv, gv := random(40, n, 1), random(41, n, 0.1)
	add("AdamW", func() []*tensor.Tensor {
		p, g, m, v := both(ref, pv, n), both(ref, gv, n), both(ref, nil, n), both(ref, nil, n)
		for step := 1; step <= 2; step++ {
			gpu.AdamW(p.g.Data, g.g.Data, m.g.Data, v.g.Data, n, tensor.AdamWHyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-2, Step: step})
		}
		return []*tensor.Tensor{p.g, m.g, v.g}
	})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var first [][]float32
			for i, o := range orders {
				emu.SetOrder(o.o, o.seed)
				outs := c.f()
				for j, out := range outs {
					got := tensor.ToHost(gpu, out)
					if i == 0 {
						first = append(first, got)
						continue
					}
					for e := range got {
						if math.Float32bits(got[e]) != math.Float32bits(first[j][e]) {
							t.Fatalf("output %d, element %d: %v under order %v (seed %d), %v under forward",
								j, e, got[e], o.o, o.seed, first[j][e])
						}
					}
				}
			}
			for j, v := range first {
				for e, x := range v {
					if math.IsNaN(float64(x)) {
						t.Fatalf("output %d, element %d is NaN", j, e)
					}
				}
			}
		})
	}
}

// restoreOrder puts back the thread order the run was started with
// ($UHNO_EMU_ORDER, forward by default).
func restoreOrder(t *testing.T) {
	o, seed := emu.Forward, uint64(0)
	if s := os.Getenv(EnvOrder); s != "" {
		var err error
		if o, seed, err = emu.ParseOrder(s); err != nil {
			t.Error(err)
		}
	}
	emu.SetOrder(o, seed)
}
