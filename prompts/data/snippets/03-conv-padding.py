# framework: PyTorch
# source: reports on the PyTorch and ONNX exporter trackers (search "conv2d padding same stride"):
#   asymmetric 'same' padding of an even kernel computed on the wrong side.
import torch
import torch.nn as nn

conv = nn.Conv2d(2, 4, kernel_size=4, stride=1, padding="same", bias=False)
x = torch.randn(1, 2, 7, 7)
y = conv(x)
print(y.shape)
