"""Parameter groups for weight decay: decay the weight matrices, not biases, norms or embeddings.

Weight decay pulls weights towards zero. On a matrix of a Linear layer that is regularisation;
on a bias, a LayerNorm/RMSNorm gain or an embedding table it only fights the model (a norm's
gain of 1 is its neutral value; a rare token's embedding would decay away between the steps
that use it). :func:`weight_decay_groups` splits a model's parameters into those two groups
for ``AdamW`` (or any optimiser), in the form PyTorch's optimisers take.

Example:
    >>> from chainrule import nn, optim
    >>> model = nn.Sequential(nn.Embedding(10, 4, rng=0), nn.LayerNorm(4), nn.Linear(4, 3, rng=0))
    >>> groups = optim.weight_decay_groups(model, weight_decay=0.1)
    >>> [(g["weight_decay"], [tuple(p.shape) for p in g["params"]]) for g in groups]
    [(0.1, [(3, 4)]), (0.0, [(10, 4), (4,), (4,), (3,)])]
    >>> opt = optim.AdamW(groups, lr=1e-3)
    >>> optim.weight_decay_groups(model, 0.1, names=True)[1]["names"]
    ['0.weight', '1.weight', '1.bias', '2.bias']
"""

from __future__ import annotations

from typing import Any

__all__ = ["weight_decay_groups", "NO_DECAY_MODULES"]

NO_DECAY_MODULES = ("Embedding", "LayerNorm", "RMSNorm")  # class names: parameters of these never decay


def weight_decay_groups(model: Any, weight_decay: float, no_decay_modules: tuple[str, ...] = NO_DECAY_MODULES,
                        names: bool = False) -> list[dict[str, Any]]:
    """``[{'params': decayed, 'weight_decay': weight_decay}, {'params': rest, 'weight_decay': 0.0}]``.

    A parameter is *not* decayed when its name ends in ``bias``, when it has fewer than two
    axes, or when it belongs to a module whose class is named in ``no_decay_modules``
    (embeddings and norms). A parameter shared by two modules (tied embeddings) comes once, in
    the group of its first owner (``named_parameters`` order). Empty groups are left out.
    ``names=True`` adds each group's parameter names under ``'names'`` (for printing; remove
    that key before handing the groups to an optimiser).
    """
    if not hasattr(model, "named_modules"):
        raise TypeError(f"weight_decay_groups: expected a Module, got {type(model).__name__}")
    if weight_decay < 0:
        raise ValueError(f"weight_decay_groups: weight_decay must be >= 0, got {weight_decay}")
    quiet: set[int] = set()
    for _, mod in model.named_modules():
        if type(mod).__name__ in no_decay_modules:
            quiet.update(id(p) for p in mod.parameters(recurse=False))
    decay: list[tuple[str, Any]] = []
    rest: list[tuple[str, Any]] = []
    for name, p in model.named_parameters():
        no = id(p) in quiet or name.rsplit(".", 1)[-1] == "bias" or len(p.shape) < 2
        (rest if no else decay).append((name, p))
    groups = []
    for members, wd in ((decay, float(weight_decay)), (rest, 0.0)):
        if members:
            group: dict[str, Any] = {"params": [p for _, p in members], "weight_decay": wd}
            if names:
                group["names"] = [n for n, _ in members]
            groups.append(group)
    return groups
