# framework: PyTorch
# source: reports on the PyTorch tracker (search "cumsum int overflow dtype"): cumulative sum of
#   int32 values that overflows.
import torch

x = torch.tensor([2**30, 2**30, 2**30], dtype=torch.int32)
print(torch.cumsum(x, dim=0))
