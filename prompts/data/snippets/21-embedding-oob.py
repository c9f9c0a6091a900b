# framework: PyTorch
# source: reports on the PyTorch tracker (search "embedding index out of range silent"): an
#   embedding lookup with an index at the table's size must fail, not read past the table.
import torch
import torch.nn as nn

emb = nn.Embedding(10, 3)
print(emb(torch.tensor([[1, 9, 10]])))
