# framework: PyTorch
# source: reports on the PyTorch tracker (search "topk nan"): topk over values with NaN returns
#   different indices on CPU and GPU.
import torch

x = torch.tensor([1.0, float("nan"), 3.0, 2.0])
values, indices = torch.topk(x, k=2)
print(values, indices)
