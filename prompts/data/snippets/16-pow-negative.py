# framework: PyTorch
# source: reports on the PyTorch tracker (search "pow negative base fractional exponent"): a
#   negative base with a fractional exponent must give NaN, an integral one a real value.
import torch

x = torch.tensor([-8.0, -2.0, 4.0])
print(torch.pow(x, torch.tensor([1.0 / 3.0, 2.0, 0.5])))
