package experiment

import (
	"fmt"
	"io"

	"uhno/internal/config"
	"uhno/internal/runrec"
	"uhno/internal/tensor"
)

// --precision of `uhno train` (internal/cuda's package documentation, "bf16 autocast").
//
// bf16 is autocast on the CUDA backend: the dense products (Pointwise,
// ConvDown, Conv3, DepthwiseConv) round their operands to bf16 and
// accumulate in float32; weights, gradients, AdamW, reductions and FFTs
// stay float32. The default follows the paper (App. "3D-CFD
// Configuration": torch.amp.autocast bf16 in 3D): bf16 for cfd3d on the
// CUDA backend, fp32 for every other task. The CPU backend computes in
// float32 only: --precision bf16 there is an error, and cfd3d's default
// quietly stays fp32 there, with one line saying so.
//
// The precision changes the arithmetic, so it is part of the run: it is
// recorded in the checkpoint's build record (runrec.BuildRecord.Precision) and a
// resume keeps it. --precision on --resume is accepted only when it names
// the recorded value; a checkpoint of an older uhno records none and was
// trained in fp32. A bf16 run cannot be resumed on the CPU backend.

const (
	precisionBF16 = "bf16"
	precisionFP32 = "fp32"
)

// PrecisionSetter is a backend with a precision setting (cuda.Backend;
// the cuda builds of cmd/uhno assert that it is one).
type PrecisionSetter interface {
	SetPrecision(p string) error
	Precision() string
}

// choosePrecision decides a run's precision: flag is --precision ("" when
// not given), autocast whether the backend has bf16 autocast, recorded
// the checkpoint's value on --resume (resume true; "" for an older
// checkpoint). note is a line to print, or "".
func choosePrecision(task, flag string, autocast, resume bool, recorded string) (p, note string, err error) {
	if flag != "" && flag != precisionBF16 && flag != precisionFP32 {
		return "", "", fmt.Errorf("train: --precision %q: want bf16 or fp32", flag)
	}
	if resume {
		p = recorded
		if p == "" {
			p = precisionFP32
		}
		if flag != "" && flag != p {
			return "", "", fmt.Errorf("train: --precision %s cannot be combined with --resume of a %s run: the precision changes the arithmetic, and a resumed run keeps its checkpoint's", flag, p)
		}
		if p == precisionBF16 && !autocast {
			return "", "", fmt.Errorf("train: the run was trained with --precision bf16, which needs the CUDA backend (bin/uhno-cuda); the CPU backend computes in float32")
		}
		return p, "", nil
	}
	switch {
	case flag == precisionBF16 && !autocast:
		return "", "", fmt.Errorf("train: --precision bf16 needs the CUDA backend (bin/uhno-cuda); the CPU backend computes in float32")
	case flag != "":
		return flag, "", nil
	}
	// The task's default (config.TaskSpec.Precision: bf16 for cfd3d).
	if spec, err := config.LookupTask(task); err == nil && spec.Precision == precisionBF16 {
		if autocast {
			return precisionBF16, "", nil
		}
		return precisionFP32, fmt.Sprintf("precision: fp32 (the CPU backend computes in float32; %s's default, bf16 autocast, needs bin/uhno-cuda)", task), nil
	}
	return precisionFP32, "", nil
}

// setPrecision chooses the run's precision (choosePrecision), sets it on
// the backend, records it in rec and prints what was chosen when it is
// bf16 or a note is due.
func setPrecision(be tensor.Backend, task, flag string, resume bool, rec *runrec.BuildRecord, out io.Writer) error {
	ps, autocast := be.(PrecisionSetter)
	p, note, err := choosePrecision(task, flag, autocast, resume, rec.Precision)
	if err != nil {
		return err
	}
	if autocast {
		if err := ps.SetPrecision(p); err != nil {
			return fmt.Errorf("train: %w", err)
		}
	}
	rec.Precision = p
	if note != "" {
		fmt.Fprintln(out, note)
	}
	if p == precisionBF16 {
		fmt.Fprintln(out, "precision: bf16 autocast (dense products in bf16 with float32 accumulation; weights, AdamW, FFTs and reductions in float32)")
	}
	return nil
}
