"""torch.cuda / torch.backends / torch.device('cuda') in a CPU-only library: the answers of
PyTorch's CPU build (the oracle), and a clear error wherever CUDA would be used."""
import pytest

import numtorch
from numtorch._core.tensor import CudaNotAvailableError

QUERIES = ["cuda.is_available()", "cuda.device_count()", "cuda.is_initialized()",
           "cuda.is_bf16_supported()", "cuda.manual_seed(1)", "cuda.manual_seed_all(1)",
           "cuda.seed()", "cuda.seed_all()", "cuda.empty_cache()", "cuda.memory_allocated()",
           "cuda.max_memory_allocated()", "backends.cudnn.is_available()",
           "backends.cudnn.version()", "backends.mps.is_available()", "backends.mps.is_built()",
           "backends.cuda.is_built()", "backends.cudnn.enabled", "backends.cudnn.benchmark",
           "backends.cudnn.deterministic", "backends.cudnn.allow_tf32",
           "backends.cuda.matmul.allow_tf32", "get_default_device()", "set_default_device('cpu')",
           "repr(device('cuda'))", "repr(device('cuda:1'))", "repr(device('cuda', 0))",
           "str(device('cuda:1'))", "device('cuda') == device('cuda')",
           "device('cuda:0') == device('cuda:1')", "repr(device('cpu'))"]


@pytest.mark.parametrize("expr", QUERIES)
def test_answers_match_pytorchs_cpu_build(expr):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("the oracle must be a CPU-only PyTorch")
    ours = eval(expr, {"__builtins__": __builtins__}, vars(numtorch))
    theirs = eval(expr, {"__builtins__": __builtins__}, vars(torch))
    assert repr(ours) == repr(theirs) if "device(" in expr else ours == theirs


def test_flags_are_settable_and_importable_as_modules():
    import numtorch.backends.cudnn as cudnn
    old = cudnn.benchmark
    try:
        numtorch.backends.cudnn.benchmark = True
        numtorch.backends.cuda.matmul.allow_tf32 = True
        assert cudnn.benchmark is True and numtorch.backends.cuda.matmul.allow_tf32 is True
    finally:
        cudnn.benchmark = old
        numtorch.backends.cuda.matmul.allow_tf32 = False


USES = [lambda: numtorch.ones(1, device="cuda"), lambda: numtorch.ones(1).to("cuda"),
        lambda: numtorch.ones(1).to(numtorch.device("cuda", 0)), lambda: numtorch.ones(1).cuda(),
        lambda: numtorch.nn.Linear(2, 2).to("cuda"), lambda: numtorch.nn.Linear(2, 2).cuda(),
        lambda: numtorch.zeros(2, device=numtorch.device("mps")), lambda: numtorch.randn(2, device="cuda:0"),
        lambda: numtorch.set_default_device("cuda"), lambda: numtorch.cuda.current_device(),
        lambda: numtorch.cuda.get_device_name(0), lambda: numtorch.cuda.get_rng_state()]


@pytest.mark.parametrize("use", range(len(USES)))
def test_using_cuda_raises_a_clear_error(use):
    # an AssertionError like PyTorch's CPU build, and a RuntimeError that says why
    with pytest.raises(AssertionError, match="not available in numtorch") as info:
        USES[use]()
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, CudaNotAvailableError)


def test_the_everyday_device_idiom_runs():
    dev = numtorch.device("cuda" if numtorch.cuda.is_available() else "cpu")
    model = numtorch.nn.Linear(3, 1).to(dev)
    assert model(numtorch.ones(2, 3, device=dev)).shape == (2, 1)
    numtorch.cuda.synchronize()   # a no-op: numtorch computes eagerly (documented difference)
    numtorch.cuda.manual_seed_all(0)


def test_device_argument_errors():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, mps, meta"):
        numtorch.device("tpu")
    with pytest.raises(TypeError, match="argument 'type' must be str, not float"):
        numtorch.device(1.5)
    with pytest.raises(RuntimeError, match="Invalid device string"):
        numtorch.device("cuda:x")
    with pytest.raises(NotImplementedError, match="only 'cpu' as the default device"):
        numtorch.set_default_device("meta")


def test_amp_is_disabled_without_cuda():
    with pytest.warns(UserWarning, match="Disabling"):
        scaler = numtorch.cuda.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0
    x = numtorch.ones(2)
    assert scaler.scale(x) is x
