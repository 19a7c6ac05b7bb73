"""Named hook points: read or replace any intermediate of one forward pass by its name.

The forward pass hands every intermediate it shows to a Hook as hook(name, tensor) and carries on with
what comes back. The default, NO_HOOK, hands every tensor back untouched and asks for nothing, so a
plain forward keeps no intermediate and computes exactly what it computed before hooks existed.
HookPoints keeps the tensors it was asked for and replaces the ones it was given a function for.
The names are listed in the table of encoder_core/model/model.py's docstring (hook_names gives them
for one config). run_with_cache and run_with_hooks are the two ways in, after TransformerLens's
HookedTransformer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # only for the annotations: model.py imports this module
    from .config import EncoderConfig
    from .model import Encoder, EncoderOutput

# Per block, in the order a block computes them; the full name is f"blocks.{i}.{name}".
BLOCK_HOOKS = (
    "resid_pre",
    "attn.in",
    "attn.scores",
    "attn.pattern",
    "attn.head_out",
    "attn.out",
    "resid_mid",
    "ffn.in",
    "ffn.hidden",
    "ffn.activated",
    "ffn.out",
    "resid_post",
)
EMBEDDING_HOOKS = ("embed.token", "embed")
# Both need a fresh weights matrix: the fused attention kernel never makes one.
WEIGHT_HOOKS = ("attn.scores", "attn.pattern")

Replacement = Callable[[torch.Tensor], torch.Tensor]


def hook_names(config: EncoderConfig) -> tuple[str, ...]:
    """Every hook point of a model with this config, in the order a forward pass reaches them."""
    blocks = tuple(f"blocks.{i}.{name}" for i in range(config.n_layers) for name in BLOCK_HOOKS)
    return EMBEDDING_HOOKS + blocks + (("final_norm",) if config.norm == "pre" else ())


class Hook:
    """Where a forward pass hands each named intermediate. This one hands every tensor back and asks for none."""

    def __call__(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        return tensor

    def wants(self, name: str) -> bool:
        """Whether anything is done at this hook point (attention makes its weights only when it is)."""
        return False

    def within(self, prefix: str) -> Hook:
        """The same hook, for the names under prefix (a block's hooks are named without "blocks.{i}.")."""
        return self


NO_HOOK = Hook()


class HookPoints(Hook):
    """Keeps the tensors named in `keep` (in .cache, under their full names) and replaces each tensor named in
    `replace` by replace[name](tensor) before the forward pass goes on with it. Where both name one point,
    the cache holds the replacement: what the rest of the pass read."""

    def __init__(
        self,
        keep: Iterable[str] = (),
        replace: dict[str, Replacement] | None = None,
        *,
        prefix: str = "",
        cache: dict[str, torch.Tensor] | None = None,
    ):
        self.keep = frozenset(keep)
        self.replace = dict(replace or {})
        self.prefix = prefix
        self.cache = {} if cache is None else cache

    def __call__(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        name = self.prefix + name
        replacement = self.replace.get(name)
        if replacement is not None:
            new = replacement(tensor)
            if not isinstance(new, torch.Tensor) or new.shape != tensor.shape:
                got = tuple(new.shape) if isinstance(new, torch.Tensor) else type(new).__name__
                raise ValueError(f"the replacement for {name} must keep its shape {tuple(tensor.shape)}, got {got}")
            tensor = new
        if name in self.keep:
            self.cache[name] = tensor
        return tensor

    def wants(self, name: str) -> bool:
        name = self.prefix + name
        return name in self.keep or name in self.replace

    def within(self, prefix: str) -> HookPoints:
        # Shares keep, replace and the cache: a block's tensors land in the one cache under their full names.
        inner = HookPoints(prefix=self.prefix + prefix, cache=self.cache)
        inner.keep, inner.replace = self.keep, self.replace
        return inner


def check_names(config: EncoderConfig, names: Iterable[str]) -> None:
    """Refuse a name the model has no hook point for: a misspelt name would otherwise do nothing, silently."""
    known = set(hook_names(config))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"no hook point named {', '.join(map(repr, unknown))}; see hook_names(config)")


def run_with_cache(
    model: Encoder,
    ids: torch.Tensor,
    *args,
    names: Iterable[str] | None = None,
    replace: dict[str, Replacement] | None = None,
    **kwargs,
) -> tuple[EncoderOutput, dict[str, torch.Tensor]]:
    """(output, {name: tensor}) of one forward pass, keeping only the named hook points (None: every one).

    args and kwargs go to Encoder.forward (segments, key_padding_mask, causal, head_mask, key_mask, start_at,
    resid, ...); replace as in run_with_hooks. A point the pass does not reach (a layer below start_at) is
    absent from the cache."""
    keep = hook_names(model.config) if names is None else tuple(names)
    check_names(model.config, keep)
    hooks = _hook_points(model, keep, replace)
    return model(ids, *args, hooks=hooks, **kwargs), hooks.cache


def run_with_hooks(
    model: Encoder, ids: torch.Tensor, *args, replace: dict[str, Replacement], **kwargs
) -> EncoderOutput:
    """One forward pass in which each named point's tensor is replaced by replace[name](tensor)."""
    return model(ids, *args, hooks=_hook_points(model, (), replace), **kwargs)


def _hook_points(model: Encoder, keep, replace) -> HookPoints:
    check_names(model.config, replace or {})
    return HookPoints(keep, replace)
