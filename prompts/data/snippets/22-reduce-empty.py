# framework: PyTorch
# source: reports on the PyTorch tracker (search "mean of empty tensor nan"): mean over an empty
#   dimension gives NaN; max over it must fail.
import torch

x = torch.zeros(3, 0)
print(torch.mean(x, dim=1))
print(torch.sum(x, dim=1))
