# framework: PyTorch
# source: reports on the PyTorch tracker (search "lstm batch_first hidden state"): an LSTM with
#   batch_first and a one-step sequence.
import torch
import torch.nn as nn

lstm = nn.LSTM(input_size=3, hidden_size=4, batch_first=True)
x = torch.randn(2, 1, 3)
out, (h, c) = lstm(x)
print(out.shape, h.shape)
