# framework: PyTorch
# source: reports on the ONNX Runtime and tract trackers (search "gather negative indices"):
#   index_select / Gather with negative indices.
import torch

x = torch.arange(12.0).reshape(3, 4)
idx = torch.tensor([-1, 0])
print(torch.index_select(x, 0, idx))
