"""A running loss summed as a tensor keeps every step's autograd graph alive; with retain_graph=True
(added to silence "backward through the graph a second time") that graph still holds every step's
activations. Fix: accumulate loss.item()."""

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
model = nn.Sequential(*[layer for _ in range(depth) for layer in (nn.Linear(width, width), nn.ReLU())], nn.Linear(width, classes)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
generator = torch.Generator().manual_seed(1)
total_loss = 0
for step in range(args.steps):
    inputs = torch.randn(args.batch_size, width, generator=generator).to(device)
    labels = torch.randint(0, classes, (args.batch_size,), generator=generator).to(device)
    loss = F.cross_entropy(model(inputs), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward(retain_graph=True)
    optimizer.step()
    total_loss += loss
    print(f"step {step} mean loss {float(total_loss) / (step + 1):.4f}")
