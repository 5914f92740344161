"""An MLP whose batch alone is too large for the (simulated) GPU. Fix: a smaller micro-batch with
gradient accumulation (--batch-size 1024 --accumulate 4 keeps the effective batch of 4096)."""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=4096)
parser.add_argument("--accumulate", type=int, default=1)
parser.add_argument("--steps", type=int, default=3)
args = parser.parse_args()

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
width, depth, classes = 512, 8, 10
model = nn.Sequential(*[layer for _ in range(depth) for layer in (nn.Linear(width, width), nn.ReLU())], nn.Linear(width, classes)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
generator = torch.Generator().manual_seed(1)
effective = args.batch_size * args.accumulate
for step in range(args.steps):
    inputs = torch.randn(effective, width, generator=generator).to(device)
    labels = torch.randint(0, classes, (effective,), generator=generator).to(device)
    for micro_inputs, micro_labels in zip(inputs.split(args.batch_size), labels.split(args.batch_size)):
        loss = F.cross_entropy(model(micro_inputs), micro_labels) / args.accumulate
        loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step} done")
