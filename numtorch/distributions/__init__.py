"""``torch.distributions``: parameterizable probability distributions and sampling
functions — ``Normal``, ``Uniform``, ``Exponential``, ``Laplace``, ``Bernoulli``,
``Categorical`` — with ``log_prob``, ``sample``/``rsample``, ``entropy``, ``cdf``/``icdf``
(the continuous ones), ``mean``/``variance`` and PyTorch's argument validation, and
``kl_divergence`` between the pairs kl.py registers. Not built: the other distributions
(MultivariateNormal, Beta, Gamma, Dirichlet, ...), Independent, transforms."""
from . import constraints  # noqa: F401
from .discrete import Bernoulli, Categorical  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .exponential import Exponential, Laplace  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
from .normal import Normal, Uniform  # noqa: F401

__all__ = ["Distribution", "Normal", "Uniform", "Exponential", "Laplace", "Bernoulli",
           "Categorical", "constraints", "kl_divergence", "register_kl"]
