# framework: PyTorch
# source: reports on the PyTorch tracker (search "float to uint8 cast out of range"): casting
#   out-of-range floats to uint8 differs between CPU and GPU.
import torch

x = torch.tensor([300.0, -1.0, 1e10])
print(x.to(torch.uint8))
