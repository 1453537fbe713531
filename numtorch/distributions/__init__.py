"""``torch.distributions``: parameterizable probability distributions and sampling
functions — ``Normal``, ``Uniform``, ``Bernoulli``, ``Categorical`` — with ``log_prob``,
``sample``/``rsample``, ``entropy``, ``mean``/``variance`` and PyTorch's argument
validation. Not built: the other distributions, transforms, ``kl_divergence``."""
from . import constraints  # noqa: F401
from .discrete import Bernoulli, Categorical  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .normal import Normal, Uniform  # noqa: F401

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "constraints"]
