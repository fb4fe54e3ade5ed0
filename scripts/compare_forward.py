"""Compare one forward pass of a uhno checkpoint with the PyTorch yardstick
(../shared/yardstick/uhno_torch.py) holding the same weights.

    go run ./scripts/forward_dump -checkpoint runs/burgers-uhno -n 64 -out /tmp/fwd
    /usr/bin/python3 scripts/compare_forward.py /tmp/fwd

Loads uhno's weights.safetensors into the yardstick's modules by name
(uhno's names are documented in internal/train's package documentation, "Checkpoints"), feeds both
the same normalised inputs and prints the largest absolute and relative
difference of the predictions, and of the SPAR masks' agreement. 1D only
(the corner order of 2D spectral weights is not mapped here).
"""
import json
import struct
import sys

import numpy as np
import torch


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    out = {}
    for k, v in head.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        out[k] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.float32).reshape(v["shape"])
    return out


def torch_name(ours):
    """uhno parameter name -> yardstick state_dict name(s) with a slicer."""
    parts = ours.split(".")
    if parts[-1] in ("w", "b") and "fourier" not in parts:
        parts[-1] = "weight" if parts[-1] == "w" else "bias"
    name = ".".join(parts).replace(".spar.", ".gate.")
    if name.startswith("proj.1."):
        name = "proj.2." + name[len("proj.1."):]
    return name


def main():
    d = sys.argv[1]
    sys.path.insert(0, sys.argv[2] if len(sys.argv) > 2 else "../shared/yardstick")
    import uhno_torch as U
    meta = json.load(open(d + "/meta.json"))
    x = torch.from_numpy(np.fromfile(d + "/input.f32", dtype=np.float32).reshape(meta["input_shape"]))
    ours = np.fromfile(d + "/output.f32", dtype=np.float32).reshape(meta["output_shape"])
    w = read_safetensors(meta["weights"])
    s = meta.get("fno") or meta.get("uhno")
    if meta["model"] == "fno":
        m = U.FNO(s["Dim"], s["InChannels"], s["OutChannels"], s["Width"], s["K0"], n_blocks=s["Blocks"], proj_hidden=s["ProjHidden"])
    else:
        assert s["Dim"] == 1, "1D only"
        m = U.UHNO(s["Dim"], s["InChannels"], s["OutChannels"], C0=s["C0"], L=s["Levels"], K0=s["K0"],
                   mode={"full": "full"}.get(s["Mode"], s["Mode"]), width_mult=s["WidthMult"], proj_hidden=s["ProjHidden"],
                   M=s["M"], groups=s["Groups"], sigmas=tuple(s["Sigmas"]), max_radius=s["MaxRadius"])
    sd = m.state_dict()
    new = {}
    renamed = {}
    for k, v in w.items():
        if k.startswith("dec.") and meta["model"] != "fno":                  # uhno's dec.l is level l; the yardstick lists stages coarse to fine
            i, rest = k[4:].split(".", 1)
            k = f"dec.{s['Levels'] - 1 - int(i)}.{rest}"
        renamed[k] = v
    w = renamed
    for k, v in w.items():
        if ".fourier.w" in k:                     # [corners, Cin, Cout, K..., 2]
            base = k[:-len(".w")]
            for c in range(v.shape[0]):
                new[f"{base}.weights.{c}"] = v[c]
        elif ".gauss.pre." in k:                  # one [M*C, C] mixer = M stacked 1x1 convs
            base, kind = k.rsplit(".", 1)
            M = len(s["Sigmas"])
            C = v.shape[0] // M
            for i in range(M):
                new[f"{base}.{i}.{'weight' if kind == 'w' else 'bias'}"] = v[i * C:(i + 1) * C]
        elif k.startswith("block.") and ".spectral.w" in k:   # FNO spectral weights
            i = k.split(".")[1]
            for c in range(v.shape[0]):
                new[f"spec.{i}.weights.{c}"] = v[c]
        elif k.startswith("block."):                            # FNO's 1x1 residual W
            i, kind = k.split(".")[1], k.split(".")[-1]
            new[f"w.{i}.{'weight' if kind == 'w' else 'bias'}"] = v
        else:
            new[torch_name(k)] = v
    missing = [k for k in sd if k not in new]
    extra = [k for k in new if k not in sd]
    if missing or extra:
        sys.exit(f"name mapping: missing {missing[:5]}, extra {extra[:5]}")
    for k in sd:
        t = torch.from_numpy(np.array(new[k]))
        if t.numel() != sd[k].numel():
            sys.exit(f"{k}: {list(t.shape)} vs {list(sd[k].shape)}")
        sd[k] = t.reshape(sd[k].shape)
    m.load_state_dict(sd)
    m.eval()
    with torch.no_grad():
        y, aux = m(x)
    y = y.numpy()
    diff = np.abs(y - ours)
    rel = np.linalg.norm(y - ours) / np.linalg.norm(y)
    print(json.dumps(dict(model=meta["model"], samples=int(x.shape[0]), max_abs_diff=float(diff.max()),
                          rel_l2_diff=float(rel), max_abs_output=float(np.abs(y).max()))))


if __name__ == "__main__":
    main()
