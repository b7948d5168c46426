"""Data-parallel training over MPI: run it with ``mpiexec -n 2 python examples/ddp_train.py`` (any N).

Every rank builds the same MLP; DistributedDataParallel copies rank 0's weights to all and averages
the gradients after each backward(); DistributedSampler gives each rank its share of every epoch.
"""

import numpy as np

from chainrule import distributed as dist
from chainrule import nn, optim
from chainrule.data import DistributedSampler, make_moons

dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()

X, y = make_moons(512, noise=0.1, seed=0)
model = nn.parallel.DistributedDataParallel(nn.MLP(2, [32, 2], rng=rank))  # rank 0's weights win
opt = optim.Adam(model.parameters(), lr=0.02)
sampler = DistributedSampler(range(len(X)), seed=0)
per_rank_batch = 64 // world

for epoch in range(15):
    sampler.set_epoch(epoch)  # a new order each epoch, the same on every rank
    mine = np.array(list(sampler))
    for start in range(0, len(mine), per_rank_batch):
        rows = mine[start:start + per_rank_batch]
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(X[rows].astype(np.float32)), y[rows])
        loss.backward()  # returns with every .grad averaged over the ranks
        opt.step()
    total = np.array([float(loss)])
    dist.all_reduce(total, op=dist.ReduceOp.AVG)
    if rank == 0 and epoch % 5 == 4:
        print(f"epoch {epoch + 1}: loss {total[0]:.3f} (mean over {world} ranks)")

accuracy = float(np.mean(model(X.astype(np.float32)).data.argmax(1) == y))
checksums: list = []
dist.all_gather_object(checksums, [float(p.data.sum()) for p in model.parameters()])
if rank == 0:
    print(f"accuracy {accuracy:.3f}; every rank holds the same weights: {all(c == checksums[0] for c in checksums)}")
dist.destroy_process_group()
