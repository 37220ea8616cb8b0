"""``/metrics`` in the metric's units on a real server (tests/servers.py): tokens encoded and their
padding per compute, the reference cache's hits and misses, pairs/s, and the calls the scheduler
dropped unscored because their deadline passed while they were queued; the objects the server
kept out of garbage collections once loaded."""

from __future__ import annotations

import re
import socket
import threading
import time

import pytest
from servers import ServeProcess

import nlgscore

httpx = pytest.importorskip("httpx")

SPEC = "bertscore:minilm:L2"


def _value(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


def test_metrics_count_tokens_padding_cache_hits_and_deadline_drops():
    preds, ref = ["The cat sat.", "A dog ran across the wide green field today."], "A cat is on the mat."
    encoder = nlgscore.load(SPEC).encoder
    tokens = {
        text: len(ids) for text, ids in zip(preds + [ref], encoder.tokenize(preds + [ref])[0])
    }  # special tokens included
    with ServeProcess(SPEC, "--timeout", "1", "--threads", "1") as proc:
        proc.wait_ready()
        seen = [proc.get("/metrics").text]
        assert (
            _value(seen[0], "nlgscore_gc_frozen_objects") > 10_000
        )  # the loaded model's objects, out of full collections
        for _ in range(2):  # the same request twice: the second finds its reference in the cache
            assert proc.post("/v1/score", json={"predictions": preds, "references": [ref, ref]}).status_code == 200
            seen.append(proc.get("/metrics").text)
        moved = [
            {
                name: _value(after, name) - _value(before, name)
                for name in (
                    "nlgscore_tokens_total",
                    "nlgscore_reference_cache_hits_total",
                    "nlgscore_reference_cache_misses_total",
                    "nlgscore_batch_tokens_count",
                    "nlgscore_batch_tokens_sum",
                    "nlgscore_padding_tokens_total",
                )
            }
            for before, after in zip(seen, seen[1:])
        ]
        real = sum(tokens[p] for p in preds)
        assert (
            moved[0]["nlgscore_tokens_total"] == real + tokens[ref] and moved[1]["nlgscore_tokens_total"] == real
        )  # the reference once
        assert (
            moved[0]["nlgscore_batch_tokens_sum"] == real + tokens[ref] and moved[0]["nlgscore_batch_tokens_count"] == 1
        )
        assert (
            moved[0]["nlgscore_reference_cache_misses_total"] == 1
            and moved[0]["nlgscore_reference_cache_hits_total"] == 0
        )
        assert (
            moved[1]["nlgscore_reference_cache_hits_total"] == 1
            and moved[1]["nlgscore_reference_cache_misses_total"] == 0
        )
        assert moved[0]["nlgscore_padding_tokens_total"] > 0  # two texts of unequal length padded in one encoder batch
        assert (
            _value(seen[-1], "nlgscore_batch_padding_ratio_count") == 2
            and _value(seen[-1], "nlgscore_pairs_per_second") > 0
        )

        # A long call (thousands of pairs, seconds of compute) passes its 1 s deadline while it runs:
        # answered 504 and stopped between its batches. A small call queued behind it is answered
        # once: 504 and dropped unscored if its own deadline passed before the model was free, else
        # scored (the stopped run frees the model early; which comes first is the machine's timing).
        big = {
            "predictions": [f"sentence number {i} about a cat on a mat" for i in range(4096)],
            "references": [ref] * 4096,
        }  # --max-items
        answers = []
        long = threading.Thread(target=lambda: answers.append(proc.post("/v1/score", json=big)))
        long.start()
        time.sleep(0.15)  # the long call is running
        # A client that sends a whole request, then leaves while its call is queued: answered 499
        # (counted as a disconnect) as soon as uvicorn reports it gone, and its call dropped unscored.
        body = b'{"predictions": ["A bird sang."], "references": ["A bird is singing."]}'
        leaving = socket.create_connection(("127.0.0.1", proc.port))
        leaving.sendall(
            b"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body)
        )
        until = time.monotonic() + 30
        while _value(proc.get("/metrics").text, "nlgscore_queue_length") < 1 and time.monotonic() < until:
            time.sleep(0.02)  # its call is queued (its body read): it leaves now
        leaving.close()
        small = proc.post("/v1/score", json={"predictions": ["The cat sat."], "references": [ref]})
        left = _value(proc.get("/metrics").text, 'nlgscore_dropped_total{reason="disconnect"}')
        long.join()
        expected = 1 + (small.status_code == 504)  # the client that left, and the small call if it expired
        deadline, dropped = time.monotonic() + 60, 0.0
        while dropped < expected and time.monotonic() < deadline:
            time.sleep(0.1)
            text = proc.get("/metrics").text
            dropped = sum(
                _value(text, f'nlgscore_scheduler_dropped_total{{reason="{why}"}}') for why in ("deadline", "cancelled")
            )
        assert answers[0].status_code == 504 and small.status_code in (200, 504) and dropped == expected
        assert left == 1  # the client that left was answered 499 while the long call still ran
        assert proc.terminate() == 0, proc.output()


def test_candidate_cache_keeps_predictions_across_requests_with_the_same_bits():
    """``--candidate-cache``: a prediction scored again is found in the text cache, not re-encoded,
    and scores the same bits as when it was encoded beside other texts (a text's embedding does
    not depend on its batch). Without the flag (the test above) predictions are re-encoded."""
    ref, first, again = (
        "A cat is on the mat.",
        ["The cat sat.", "A dog ran across the wide green field today."],
        "The cat sat.",
    )
    encoder = nlgscore.load(SPEC).encoder
    with ServeProcess(SPEC, "--candidate-cache", "--threads", "1") as proc:
        proc.wait_ready()
        seen = [proc.get("/metrics").text]
        merged = proc.post("/v1/score", json={"predictions": first, "references": [ref, ref]})
        seen.append(proc.get("/metrics").text)
        alone = proc.post(
            "/v1/score", json={"predictions": [again, "Stocks fell."], "references": [ref, "Markets dropped."]}
        )
        seen.append(proc.get("/metrics").text)
        moved = [
            {
                name: _value(after, name) - _value(before, name)
                for name in (
                    "nlgscore_tokens_total",
                    "nlgscore_reference_cache_hits_total",
                    "nlgscore_reference_cache_misses_total",
                )
            }
            for before, after in zip(seen, seen[1:])
        ]
        assert merged.status_code == alone.status_code == 200
        new = sum(len(ids) for ids in encoder.tokenize(["Stocks fell.", "Markets dropped."])[0])
        assert (
            moved[0]["nlgscore_reference_cache_misses_total"] == 3
            and moved[0]["nlgscore_reference_cache_hits_total"] == 0
        )
        assert (
            moved[1]["nlgscore_reference_cache_hits_total"] == 2
            and moved[1]["nlgscore_reference_cache_misses_total"] == 2
        )
        assert moved[1]["nlgscore_tokens_total"] == new  # "The cat sat." and the reference came from the cache
        assert alone.json()["scores"][0] == merged.json()["scores"][0]  # bit for bit (JSON carries a float64 exactly)
        assert proc.terminate() == 0, proc.output()
