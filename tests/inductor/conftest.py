"""Shared fixtures of the inductor tests."""
import pytest

from numtorch._inductor import config


@pytest.fixture
def same_bits_at_one_and_two_threads():
    """``check(c, *args)`` calls the compiled ``c`` with ``config.cpp.threads`` 1 and then 2,
    asserts that every output has the same bits (deterministic reductions, issue #8), and
    returns the 2-thread outputs."""
    def check(c, *args):
        saved = config.cpp.threads
        try:
            config.cpp.threads = 1
            one = c(*args)
            config.cpp.threads = 2
            two = c(*args)
        finally:
            config.cpp.threads = saved
        for a, b in zip(one, two):
            assert a.numpy().tobytes() == b.numpy().tobytes()
        return two
    return check
