# framework: PyTorch
# source: reports on the PyTorch tracker (search "argmax ties first index"): argmax with equal
#   maxima must return the first index.
import torch

x = torch.tensor([[1.0, 5.0, 5.0, 0.0]])
print(torch.argmax(x, dim=1))
