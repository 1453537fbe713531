"""Module utilities: ``functional_call`` and ``stack_module_state``."""
from __future__ import annotations



def _slots(module):
    """name -> (owning module, "_parameters" or "_buffers", leaf name, tensor) for every
    parameter and buffer, duplicates (tied weights, shared submodules) included: the
    names of ``named_parameters``/``named_buffers(remove_duplicate=False)``, found in one
    walk that ``functional_call`` also uses to swap the tensors in (it runs per call, under
    vmap once per ensemble call)."""
    out = {}
    todo = [("", module)]
    while todo:
        prefix, m = todo.pop()
        d = m.__dict__
        for store in ("_parameters", "_buffers"):
            for leaf, t in d[store].items():
                if t is not None:
                    out[prefix + leaf] = (m, store, leaf, t)
        for name, child in reversed(d["_modules"].items()):
            if child is not None:
                todo.append((prefix + name + ".", child))
    return out


def _owner(module, name):
    *path, leaf = name.split(".")
    m = module
    for p in path:
        m = getattr(m, p)
    return m, leaf


def _get_slot(m, leaf):
    for store in ("_parameters", "_buffers"):
        d = m.__dict__.get(store)
        if d is not None and leaf in d:
            return store, d[leaf]
    return None, m.__dict__.get(leaf)


def _set_slot(m, leaf, store, value):
    if store is not None:
        m.__dict__[store][leaf] = value
    else:
        m.__dict__[leaf] = value


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Calls ``module`` with its parameters and buffers replaced by the given tensors.

    The module's own state is restored afterwards, also when the call raises. With
    ``tie_weights`` a tensor given for one of several tied names is used for all of them.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        values = {}
        seen = set()
        repeated = []
        for d in parameter_and_buffer_dicts:
            if not isinstance(d, dict):
                raise ValueError(f"Expected all elements of parameter_and_buffer_dicts to be "
                                 f"dictionaries, got {type(d).__name__}")
            for k in d:
                if k in seen:
                    repeated.append(k)
                seen.add(k)
            values.update(d)
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = kwargs or {}

    slots = _slots(module)
    if tie_weights:
        by_id = {}
        for name, slot in slots.items():
            by_id.setdefault(id(slot[3]), []).append(name)
        for names in by_id.values():
            given = [n for n in names if n in values]
            if given:
                if len(given) > 1 and any(values[g] is not values[given[0]] for g in given[1:]):
                    raise ValueError(f"functional_call got multiple values for keys {given}, "
                                     f"which are tied. Consider using tie_weights=False")
                for n in names:
                    values.setdefault(n, values[given[0]])
    if strict:
        missing = sorted(set(slots) - set(values))
        unexpected = sorted(set(values) - set(slots))
        if missing or unexpected:
            msg = []
            if unexpected:
                msg.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
            if missing:
                msg.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(msg))

    saved = []
    try:
        for name, value in values.items():
            slot = slots.get(name)
            if slot is not None:
                m, store, leaf, old = slot
            else:   # a plain attribute, or a name the module lacks
                m, leaf = _owner(module, name)
                store, old = _get_slot(m, leaf)
            if store is None and old is None and not strict:
                # A name the module lacks is added as a buffer for this call only.
                store = "_buffers"
                m.__dict__.setdefault("_buffers", {})
                saved.append((m, leaf, store, None, False))
            else:
                saved.append((m, leaf, store, old, True))
            _set_slot(m, leaf, store, value)
        return module(*args, **kwargs)
    finally:
        for m, leaf, store, old, existed in reversed(saved):
            if existed:
                _set_slot(m, leaf, store, old)
            else:
                m.__dict__[store].pop(leaf, None)


def stack_module_state(models):
    """Stacks the parameters and buffers of ``models`` (same class) for use with ``vmap``.

    Returns ``(params, buffers)``: dicts from names to tensors with a leading dimension of
    size ``len(models)``; stacked parameters are new leaves that require grad.
    """
    from .._ops.shape import stack
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        out = {}
        for name in named[0]:
            ts = [n[name] for n in named]
            s = stack([t.detach() for t in ts])
            if all(t.requires_grad for t in ts):
                s.requires_grad_()
            out[name] = s
        return out
    params = stacked([dict(m.named_parameters()) for m in models])
    buffers = stacked([dict(m.named_buffers()) for m in models])
    return params, buffers


