"""OpInfo entries: ``numtorch.fft`` — the transforms (NumPy's ``numpy.fft`` is the
reference: same conventions for ``n``/``s``, ``axes`` and ``norm``) and the shifts."""
from __future__ import annotations

import numpy as np

import numtorch as torch
import numtorch.fft as fft

from ..opinfo import FLOATING, OpInfo, SampleInput, make, register

_COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128,
            torch.complex64: torch.complex64, torch.complex128: torch.complex128,
            torch.int64: torch.complex64}
_REAL = {torch.float32: torch.float32, torch.float64: torch.float64, torch.int64: torch.float32,
         torch.complex64: torch.float32, torch.complex128: torch.float64}
_WITH_COMPLEX = FLOATING + (torch.complex128, torch.int64)


def _entry(name, kind, cases, **kw):
    """``kind``: "c" (complex result), "r2c" (real input only), "c2r" (real result)."""
    ref = getattr(np.fft, name)

    def reference(x, **kwargs):
        kwargs = {("axes" if k == "dim" else "axis" if k == "dim1" else k): v
                  for k, v in kwargs.items()}
        if "axes" in kwargs and isinstance(kwargs["axes"], int):
            kwargs["axis"] = kwargs.pop("axes")
        return ref(x, **kwargs)

    def samples(dtype, requires_grad):
        for shape, kwargs, label in cases:
            yield SampleInput(make(shape, dtype, requires_grad), (), kwargs, name=label)

    result = {"c": lambda s: _COMPLEX[s.input.dtype], "r2c": lambda s: _COMPLEX[s.input.dtype],
              "c2r": lambda s: _REAL[s.input.dtype]}[kind]
    return OpInfo(f"fft.{name}", op=getattr(fft, name), method=None, inplace=None,
                  torch_op=lambda t: getattr(t.fft, name), ref=reference,
                  sample_inputs=samples, result_dtype=result,
                  dtypes=FLOATING + (torch.int64,) if kind == "r2c" else _WITH_COMPLEX, **kw)


_1D = [((6,), {}, "plain"), ((3, 5), dict(n=8, dim=0), "pad"),
       ((2, 7), dict(n=4, norm="ortho"), "crop_ortho"), ((4, 3), dict(norm="forward"), "forward")]
_ND = [((3, 4), {}, "plain"), ((2, 3, 4), dict(s=(5, 2), dim=(2, 0)), "s_dim"),
       ((3, 5), dict(norm="ortho"), "ortho"), ((2, 3, 4), dict(dim=(1,), norm="forward"), "one_dim")]
_2D = [((3, 4), {}, "plain"), ((2, 3, 4), dict(s=(4, 6), norm="ortho"), "s_ortho")]

register(
    _entry("fft", "c", _1D),
    _entry("ifft", "c", _1D),
    _entry("rfft", "r2c", _1D),
    _entry("irfft", "c2r", [((5,), {}, "plain"), ((3, 4), dict(n=7, dim=0), "odd_n"),
                            ((2, 6), dict(n=4, norm="ortho"), "crop_ortho"),
                            ((4, 3), dict(norm="forward"), "forward")]),
    _entry("fftn", "c", _ND),
    _entry("ifftn", "c", _ND),
    _entry("rfftn", "r2c", _ND),
    _entry("irfftn", "c2r", [((3, 4), {}, "plain"), ((2, 3, 4), dict(s=(3, 5), dim=(0, 2)), "s_dim"),
                             ((3, 5), dict(norm="ortho"), "ortho")]),
    _entry("fft2", "c", _2D),
    _entry("ifft2", "c", _2D),
    _entry("rfft2", "r2c", _2D),
    _entry("irfft2", "c2r", _2D),
    OpInfo("fft.fftshift", op=fft.fftshift, method=None, inplace=None,
           torch_op=lambda t: t.fft.fftshift, ref=lambda x, dim=None: np.fft.fftshift(x, dim),
           sample_inputs=lambda dtype, rg: [SampleInput(make((3, 4), dtype, rg)),
                                            SampleInput(make((5, 2), dtype, rg), (0,), name="dim")],
           dtypes=_WITH_COMPLEX, result_dtype=lambda s: s.input.dtype),
    OpInfo("fft.ifftshift", op=fft.ifftshift, method=None, inplace=None,
           torch_op=lambda t: t.fft.ifftshift, ref=lambda x, dim=None: np.fft.ifftshift(x, dim),
           sample_inputs=lambda dtype, rg: [SampleInput(make((3, 5), dtype, rg)),
                                            SampleInput(make((5, 2), dtype, rg), ((0, 1),),
                                                        name="dims")],
           dtypes=_WITH_COMPLEX, result_dtype=lambda s: s.input.dtype),
)
