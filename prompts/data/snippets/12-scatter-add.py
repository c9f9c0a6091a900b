# framework: PyTorch
# source: reports on the PyTorch tracker (search "scatter_add duplicate indices"): duplicate
#   indices in scatter_add must accumulate.
import torch

src = torch.ones(2, 3)
index = torch.tensor([[0, 0, 0], [0, 0, 0]])
out = torch.zeros(2, 3).scatter_add(0, index, src)
print(out)
