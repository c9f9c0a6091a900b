# framework: PyTorch
# source: reports on the PyTorch tracker (search "integer division by zero crash"): integer
#   division by zero crashes the process on some backends.
import torch

a = torch.tensor([4, 5, 6], dtype=torch.int32)
b = torch.tensor([2, 0, 3], dtype=torch.int32)
print(torch.div(a, b, rounding_mode="trunc"))
