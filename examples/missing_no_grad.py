"""Training fits, but evaluation (with a larger batch) runs with autograd on and keeps every
layer's activations. Fix: evaluate under torch.no_grad()."""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--eval-batch-size", type=int, default=4096)
parser.add_argument("--steps", type=int, default=2)
args = parser.parse_args()

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
width, depth, classes = 512, 8, 10
model = nn.Sequential(*[layer for _ in range(depth) for layer in (nn.Linear(width, width), nn.ReLU())], nn.Linear(width, classes)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
generator = torch.Generator().manual_seed(1)


def evaluate(model, batches):
    model.eval()
    correct = 0
    for inputs, labels in batches:
        logits = model(inputs)
        correct += int((logits.argmax(-1) == labels).sum())
    model.train()
    return correct


for step in range(args.steps):
    inputs = torch.randn(args.batch_size, width, generator=generator).to(device)
    labels = torch.randint(0, classes, (args.batch_size,), generator=generator).to(device)
    loss = F.cross_entropy(model(inputs), labels)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step} loss {loss.item():.4f}")

eval_batches = [(torch.randn(args.eval_batch_size, width, generator=generator).to(device),
                 torch.randint(0, classes, (args.eval_batch_size,), generator=generator).to(device))]
print("eval correct", evaluate(model, eval_batches))
