# framework: PyTorch
# source: reports on the PyTorch tracker (search "log_softmax -inf nan"): log_softmax of a row
#   that holds -inf returns NaN instead of -inf for that entry.
import torch
import torch.nn as nn

m = nn.LogSoftmax(dim=1)
x = torch.tensor([[0.0, float("-inf"), 1.0]])
print(m(x))
