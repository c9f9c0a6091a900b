# framework: PyTorch
# source: reports on the PyTorch tracker (search "clamp nan propagate"): clamp must propagate NaN.
import torch

x = torch.tensor([float("nan"), -2.0, 2.0])
print(torch.clamp(x, min=-1.0, max=1.0))
