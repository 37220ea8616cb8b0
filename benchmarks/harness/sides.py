"""The things being timed: nlgscore's scorers, bert_score 0.3.13, and a BARTScore-style loop.

Every side is built from a plain dict (so a child process can build it) and exposes
``score(cands_or_srcs, refs_or_tgts) -> List[float]`` (BERTScore F1 or BARTScore), plus
``fresh(cache_references)``: the same loaded scorer with empty caches.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from nlgscore.errors import ArgumentError


def _floats(values: Any) -> List[float]:
    if hasattr(values, "tolist"):
        values = values.tolist()
    return [float(v) for v in values]


class NlgscoreBert:
    """``nlgscore.bertscore.scorer.BERTScorer``; the library's defaults unless the spec overrides them."""

    def __init__(self, spec: Dict[str, Any], cache_references: bool = False) -> None:
        from nlgscore.registry import build

        kwargs: Dict[str, Any] = {
            "model_type": spec["model"],
            "num_layers": spec["num_layers"],
            "device": spec["device"],
            "dtype": spec.get("dtype", "float32"),
            "cache_references": cache_references,
        }
        if spec.get("max_tokens"):
            kwargs["max_tokens"] = spec["max_tokens"]
        self.spec = spec
        self.scorer = build("bertscore", **kwargs)

    def score(self, cands: Sequence[str], refs: Sequence[str]) -> List[float]:
        return _floats(self.scorer.score(list(cands), list(refs)).f1)

    def fresh(self, cache_references: bool) -> "NlgscoreBert":
        """This scorer (already warm, like bert_score's) with an empty cache, switched on or off."""
        self.scorer.clear_reference_cache()
        # "The cache on" is the text cache of the trainer path: references and candidates.
        self.scorer.cache_references = cache_references
        self.scorer.cache_candidates = cache_references
        return self


class BertScoreReference:
    """``bert_score.BERTScorer`` 0.3.13 as it ships (fp32, ``batch_size`` sentences per batch).

    It runs unmodified on transformers 5 for the models benchmarked here, because their
    tokenizers declare a finite ``model_max_length`` (see :mod:`benchmarks.harness.synthetic`).
    """

    def __init__(self, spec: Dict[str, Any], cache_references: bool = False) -> None:
        import bert_score

        del cache_references  # bert_score has no cache: each call re-encodes everything
        self.spec = spec
        self.scorer = bert_score.BERTScorer(
            model_type=spec["model"],
            num_layers=spec["num_layers"],
            batch_size=spec.get("batch_size") or 64,
            device=spec["device"],
        )

    def score(self, cands: Sequence[str], refs: Sequence[str]) -> List[float]:
        _, _, f1 = self.scorer.score(list(cands), list(refs))
        return _floats(f1)

    def fresh(self, cache_references: bool) -> "BertScoreReference":
        return self  # stateless between calls


class NlgscoreBart:
    """``nlgscore.seq2seq.bartscore.BARTScorer`` on a checkpoint folder."""

    def __init__(self, spec: Dict[str, Any], cache_references: bool = False) -> None:
        from nlgscore.registry import build

        kwargs: Dict[str, Any] = {
            "checkpoint": spec["model"],
            "device": spec["device"],
            "dtype": spec.get("dtype", "float32"),
        }
        if spec.get("max_tokens"):
            kwargs["max_tokens"] = spec["max_tokens"]
        self.spec = spec
        self.scorer = build("bartscore", **kwargs)

    def score(self, srcs: Sequence[str], tgts: Sequence[str]) -> List[float]:
        return _floats(self.scorer.score(list(srcs), list(tgts)))

    def fresh(self, cache_references: bool) -> "NlgscoreBart":
        return self


class ReferenceBartLoop:
    """The scoring loop of neulab/BARTScore's ``bart_score.py``, re-written for comparison.

    Fixed batches of ``batch_size`` pairs in input order, fp32, no length sorting and no cache;
    source and target tokenised separately (truncated at 1,024, padded to the batch's longest),
    ``model(input_ids, attention_mask, labels=target)`` (so the model also computes its own loss,
    as in the original), then the target tokens' log-likelihood summed over the real tokens and
    divided by their number (``<s>`` and ``</s>`` included).
    """

    def __init__(self, spec: Dict[str, Any], cache_references: bool = False) -> None:
        import torch
        from transformers import AutoTokenizer, BartForConditionalGeneration

        del cache_references
        self.spec = spec
        self.device = torch.device(spec["device"])
        self.batch_size = int(spec.get("batch_size") or 4)
        self.tokenizer = AutoTokenizer.from_pretrained(spec["model"])
        self.model = BartForConditionalGeneration.from_pretrained(spec["model"]).to(self.device).eval()

    def score(self, srcs: Sequence[str], tgts: Sequence[str]) -> List[float]:
        import torch

        scores: List[float] = []
        with torch.no_grad():
            for start in range(0, len(srcs), self.batch_size):
                src = self._encode(srcs[start : start + self.batch_size])
                tgt = self._encode(tgts[start : start + self.batch_size])
                out = self.model(
                    input_ids=src["input_ids"], attention_mask=src["attention_mask"], labels=tgt["input_ids"]
                )
                logprobs = torch.log_softmax(out.logits, dim=-1)
                token = logprobs.gather(-1, tgt["input_ids"].unsqueeze(-1)).squeeze(-1)
                mask = tgt["attention_mask"].to(token.dtype)
                scores.extend(((token * mask).sum(dim=1) / mask.sum(dim=1)).tolist())
        return scores

    def _encode(self, texts: Sequence[str]) -> Dict[str, Any]:
        batch = self.tokenizer(list(texts), max_length=1024, truncation=True, padding=True, return_tensors="pt")
        return {k: v.to(self.device) for k, v in batch.items()}

    def fresh(self, cache_references: bool) -> "ReferenceBartLoop":
        return self


SIDES = {
    "nlgscore": NlgscoreBert,
    "bert_score": BertScoreReference,
    "nlgscore-bart": NlgscoreBart,
    "reference-bart": ReferenceBartLoop,
}


def build_side(spec: Dict[str, Any], cache_references: bool = False) -> Any:
    """The side named by ``spec["side"]``, loaded and ready to score."""
    try:
        cls = SIDES[spec["side"]]
    except KeyError:
        raise ArgumentError(f"side must be one of {sorted(SIDES)}, got {spec.get('side')!r}") from None
    return cls(spec, cache_references=cache_references)


def token_lengths(model: str, texts: Sequence[str], max_length: Optional[int] = None) -> List[int]:
    """Token counts (special tokens included) of the stripped ``texts`` under ``model``'s tokenizer."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model)
    limit = max_length or min(int(tokenizer.model_max_length), 512)
    encoded = tokenizer([t.strip() for t in texts], truncation=True, max_length=limit)["input_ids"]
    return [len(ids) for ids in encoded]
