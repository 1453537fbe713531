"""``torch.return_types``: the named tuples returned by ops with several results.

Note [Return types]
PyTorch returns ``torch.return_types.max(values=..., indices=...)`` from ``x.max(0)``: a
tuple (it unpacks, indexes and compares as one) whose fields have names, and which prints
as PyTorch's structseq does, the type's full name and one field per line. Tutorials print
these results, so numtorch's print the same text, ``torch.`` included (as ``Tensor``
prints ``tensor(...)``, not the class's module). Each type is a `collections.namedtuple`
subclass defined here at module level, so it pickles by name, and pytrees, ``vmap`` and
capture treat it as the named tuple it is.
"""
from __future__ import annotations

import collections

__all__ = []


def _return_type(name, fields):
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        return f"torch.return_types.{name}(\n" + ",\n".join(
            f"{field}={value!r}" for field, value in zip(self._fields, self)) + ")"

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__,
                               "__qualname__": name,
                               "__doc__": f"``torch.return_types.{name}``: ({', '.join(fields)})."})
    globals()[name] = cls
    __all__.append(name)
    return cls


for _name in ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax",
              "cummin"):
    _return_type(_name, ("values", "indices"))
_return_type("aminmax", ("min", "max"))
_return_type("frexp", ("mantissa", "exponent"))
_return_type("slogdet", ("sign", "logabsdet"))
_return_type("linalg_slogdet", ("sign", "logabsdet"))
_return_type("linalg_qr", ("Q", "R"))
_return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
_return_type("linalg_svd", ("U", "S", "Vh"))
_return_type("svd", ("U", "S", "V"))
_return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_return_type("triangular_solve", ("solution", "cloned_coefficient"))
del _name
