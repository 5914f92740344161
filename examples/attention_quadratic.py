"""Hand-written attention materialises the (seq x seq) score matrix per head and keeps it for
backward. Fix: F.scaled_dot_product_attention."""

import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=2)
parser.add_argument("--seq-len", type=int, default=1024)
parser.add_argument("--steps", type=int, default=2)
args = parser.parse_args()

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
dim, heads, layers, vocab = 128, 4, 2, 256


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        batch, length, _ = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, heads, dim // heads).permute(2, 0, 3, 1, 4)
        scale = 1.0 / math.sqrt(q.size(-1))
        attn = torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v
        return self.out(attn.transpose(1, 2).reshape(batch, length, dim))


model = nn.Sequential(nn.Embedding(vocab, dim), *[SelfAttention() for _ in range(layers)], nn.Linear(dim, vocab)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
generator = torch.Generator().manual_seed(1)
for step in range(args.steps):
    tokens = torch.randint(0, vocab, (args.batch_size, args.seq_len + 1), generator=generator).to(device)
    loss = F.cross_entropy(model(tokens[:, :-1]).flatten(0, 1), tokens[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step} loss {loss.item():.4f}")
