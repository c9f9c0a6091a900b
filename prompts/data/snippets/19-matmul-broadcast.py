# framework: PyTorch
# source: reports on the PyTorch tracker (search "matmul broadcast batch dims wrong result"):
#   batched matmul with broadcast batch dimensions.
import torch

a = torch.randn(2, 1, 3, 4)
b = torch.randn(5, 4, 2)
print(torch.matmul(a, b).shape)
