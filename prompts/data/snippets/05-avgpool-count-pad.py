# framework: PyTorch
# source: reports on the PyTorch and ONNX Runtime trackers (search "avg_pool2d count_include_pad
#   ceil_mode"): averages at the border divide by the wrong window size.
import torch
import torch.nn.functional as F

x = torch.ones(1, 1, 5, 5)
y = F.avg_pool2d(x, kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
print(y)
