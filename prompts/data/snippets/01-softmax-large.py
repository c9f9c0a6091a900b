# framework: PyTorch
# source: a class of reports on the PyTorch tracker (search "softmax inf nan large input"):
#   softmax over very large logits returns NaN on some backends when the max is not subtracted.
import torch
import torch.nn.functional as F

x = torch.tensor([[1000.0, 1000.0, -1000.0]])
y = F.softmax(x, dim=-1)
print(y)  # expected [[0.5, 0.5, 0.0]], a buggy kernel gives nan
