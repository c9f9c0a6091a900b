# framework: PyTorch
# source: reports on the PyTorch tracker (search "max_pool2d ceil_mode output size"): with
#   ceil_mode=True the last window starting in the padding gives a wrong output size.
import torch
import torch.nn as nn

pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1, ceil_mode=True)
x = torch.randn(1, 1, 6, 6)
print(pool(x).shape)
