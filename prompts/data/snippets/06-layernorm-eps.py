# framework: PyTorch
# source: reports on the PyTorch tracker (search "layer_norm constant input nan eps"): layer
#   norm of a constant row divides by sqrt(0 + eps); a kernel that drops eps returns NaN.
import torch
import torch.nn as nn

ln = nn.LayerNorm(4, eps=1e-5)
x = torch.full((2, 4), 3.0)
print(ln(x))
