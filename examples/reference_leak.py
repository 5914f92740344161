"""Every step's output is kept in a list with its autograd history; the backward keeps its graph
(retain_graph=True), so each kept output pins its step's activations. Fix: keep out.detach()."""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=512)
parser.add_argument("--steps", type=int, default=12)
args = parser.parse_args()

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
width, depth, classes = 512, 4, 10
model = nn.Sequential(*[layer for _ in range(depth) for layer in (nn.Linear(width, width), nn.Tanh())], nn.Linear(width, classes)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
generator = torch.Generator().manual_seed(1)
history = []
for step in range(args.steps):
    inputs = torch.randn(args.batch_size, width, generator=generator).to(device)
    labels = torch.randint(0, classes, (args.batch_size,), generator=generator).to(device)
    out = model(inputs)
    history.append(out)
    loss = F.cross_entropy(out, labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward(retain_graph=True)
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
