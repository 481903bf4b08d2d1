"""Sentence vectors from WordLlama (l2_supercat, 256 dimensions), in numpy.

Measurement tool for ``benchmarks/embedding.py --model wordllama``, not part of ask (not
adopted: docs/measurements.md says why). WordLlama is a static model: one vector per token,
taken from a large language model's embedding table and trained for similarity; a text's
vector is the mean of its tokens' vectors (no special tokens), L2-normalised, as the package's
own ``embed`` does (an empty text is the zero vector).
Its weights and tokenizer ship inside the ``wordllama`` package on the registry (MIT); they are
read here with ``tokenizers`` and a memory map, without the package's loader (which, in 0.4.0.post1,
looks for the tokenizer in a folder the wheel does not have and then tries to download it).
Without the packages, :func:`load` returns None.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from minilm import _safetensors

if TYPE_CHECKING:
    import numpy as np

MODEL_ID = "WordLlama l2_supercat 256"


class Encoder:
    def __init__(self, table: np.ndarray, tokenizer):
        self.table, self.tokenizer = table, tokenizer

    def encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        out = np.empty((len(texts), self.table.shape[1]), dtype=np.float32)
        for i, enc in enumerate(self.tokenizer.encode_batch(list(texts), add_special_tokens=False)):
            ids = np.clip(np.asarray(enc.ids, dtype=np.int64), 0, self.table.shape[0] - 1)
            if not len(ids):
                out[i] = 0.0
                continue
            vector = np.asarray(self.table[ids], dtype=np.float32).mean(axis=0)
            out[i] = vector / max(float(np.linalg.norm(vector)), 1e-12)
        return out


def load() -> Encoder | None:
    # The package's files are found, not imported: its own
    # imports (toml, requests, its loader) are not needed.
    spec = importlib.util.find_spec("wordllama")
    try:
        from tokenizers import Tokenizer  # type: ignore[import-not-found,import-untyped]
    except ImportError:
        return None
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).resolve().parent
    weights = _safetensors(root / "weights" / "l2_supercat_256.safetensors")
    tokenizer = Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    return Encoder(next(iter(weights.values())), tokenizer)
