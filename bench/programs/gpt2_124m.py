"""A GPT-2-124M-shaped training step (12 layers, 12 heads, 768 wide, 50304 tokens, 1024 context),
written for the fit benchmark: argparse options, SDPA with dropout, AdamW, bf16 autocast on a GPU."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--block-size", type=int, default=1024)
parser.add_argument("--steps", type=int, default=2)
parser.add_argument("--dropout", type=float, default=0.0)
args = parser.parse_args()
n_layer, n_head, n_embd, vocab = 12, 12, 768, 50304


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.qkv, self.proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, n_head, C // n_head).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=args.dropout if self.training else 0.0, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, n_embd), nn.Embedding(args.block_size, n_embd)
        self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
        self.ln = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return F.cross_entropy(self.head(self.ln(x)).reshape(-1, vocab), targets.reshape(-1))


device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = GPT().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
for step in range(args.steps):
    idx = torch.randint(0, vocab, (args.batch_size, args.block_size + 1), device=device)
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = model(idx[:, :-1], idx[:, 1:])
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
