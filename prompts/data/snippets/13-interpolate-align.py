# framework: PyTorch
# source: reports on the PyTorch and ONNX exporter trackers (search "interpolate bilinear
#   align_corners onnx mismatch"): bilinear resize with align_corners=True.
import torch
import torch.nn.functional as F

x = torch.arange(16.0).reshape(1, 1, 4, 4)
y = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
print(y)
