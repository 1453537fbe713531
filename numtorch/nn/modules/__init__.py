"""The layer classes of ``numtorch.nn``, one file per family (as in PyTorch)."""
from .module import Module  # noqa: F401
from .linear import Identity, Linear, Bilinear  # noqa: F401
from .conv import Conv1d, Conv2d, Conv3d  # noqa: F401
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d,  # noqa: F401
                      AvgPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,
                      AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d)
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from .normalization import LayerNorm, GroupNorm, RMSNorm  # noqa: F401
from .dropout import Dropout, Dropout1d, Dropout2d  # noqa: F401
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .activation import (ReLU, ReLU6, LeakyReLU, ELU, SELU, CELU, GELU, SiLU, Mish,  # noqa: F401
                         Softplus, Sigmoid, Tanh, Hardtanh, Hardsigmoid, Hardswish, LogSigmoid,
                         Softsign, Tanhshrink, Threshold, GLU, Softmax, LogSoftmax, Softmin)
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .attention import MultiheadAttention  # noqa: F401
from .transformer import (Transformer, TransformerEncoderLayer, TransformerEncoder,  # noqa: F401
                          TransformerDecoderLayer, TransformerDecoder)
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell  # noqa: F401
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d  # noqa: F401
from .loss import (L1Loss, MSELoss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss,  # noqa: F401
                   SmoothL1Loss, HuberLoss, KLDivLoss, SoftMarginLoss)
from .surface import *  # noqa: F401,F403  (PReLU, RReLU, shrinks, pixel shuffles, padding, distances)
from .surface import __all__ as _surface_all
from .loss_surface import *  # noqa: F401,F403  (more losses, InstanceNorm, Unfold/Fold)
from .conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401
from .loss_surface import __all__ as _loss_surface_all

__all__ = [
    "Module", "Identity", "Linear", "Bilinear", "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d",
    "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "BatchNorm1d",
    "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm", "Dropout", "Dropout1d",
    "Dropout2d", "Embedding", "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU",
    "Mish", "Softplus", "Sigmoid", "Tanh", "Hardtanh", "Hardsigmoid", "Hardswish", "LogSigmoid",
    "Softsign", "Tanhshrink", "Threshold", "GLU", "Softmax", "LogSoftmax", "Softmin",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Flatten",
    "Unflatten", "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
    "Transformer", "TransformerDecoderLayer", "TransformerDecoder", "RNNBase", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell",
    "GRUCell", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
    "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "SoftMarginLoss",
]
__all__ += _surface_all + _loss_surface_all + ["ConvTranspose1d", "ConvTranspose2d"]
__all__ += ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
            "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "EmbeddingBag"]
