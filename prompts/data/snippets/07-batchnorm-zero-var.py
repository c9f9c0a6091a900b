# framework: PyTorch
# source: reports on the PyTorch tracker (search "batch_norm running_var zero inference"):
#   inference batch norm with a zero running variance.
import torch
import torch.nn as nn

bn = nn.BatchNorm2d(3)
bn.eval()
bn.running_var.zero_()
x = torch.randn(1, 3, 4, 4)
print(bn(x))
