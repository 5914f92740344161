"""A transformer-style MLP stack at a small batch whose fp32 activations do not fit, but fit under
bf16 autocast. Fix: --amp (torch.autocast with bfloat16)."""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=4)
parser.add_argument("--seq-len", type=int, default=512)
parser.add_argument("--amp", action="store_true")
parser.add_argument("--steps", type=int, default=2)
args = parser.parse_args()

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
dim, layers, vocab = 256, 4, 512


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


model = nn.Sequential(nn.Embedding(vocab, dim), *[Block() for _ in range(layers)], nn.Linear(dim, vocab)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
generator = torch.Generator().manual_seed(1)
for step in range(args.steps):
    tokens = torch.randint(0, vocab, (args.batch_size, args.seq_len + 1), generator=generator).to(device)
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=args.amp):
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step} loss {loss.item():.4f}")
