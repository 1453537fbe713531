import numpy as np
import pytest

import numtorch


@pytest.fixture(autouse=True)
def _seed():
    numtorch.manual_seed(0)
    np.random.seed(0)
    yield
