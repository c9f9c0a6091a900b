# framework: PyTorch
# source: reports on the PyTorch tracker (search "reflection pad larger than input"): reflect
#   padding as large as the dimension.
import torch
import torch.nn.functional as F

x = torch.arange(6.0).reshape(1, 2, 3)
print(F.pad(x, (2, 2), mode="reflect"))
