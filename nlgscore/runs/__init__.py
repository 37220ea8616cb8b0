"""What runs calls: the Call queue, the output files, corpora larger than memory, MBR.

* ``microbatch.py``: MicroBatcher, the Call queue behind Scorer.acompute and serve
* ``queued_call.py``: QueuedCall, one call on that queue (its future, cost, deadline)
* ``loop_relay.py``: relay, a queued call's answer handed to its event loop (one wake-up for a run's answers)
* ``answer_wait.py``: wait_for_answer, a queued call's answer awaited within its deadline while its client stays
* ``heap.py``: freeze_heap, the loaded model's objects kept out of garbage collections (servers)
* ``outputs/``: output files: resumable.py, driver.py, lock.py, jsonl.py
* ``stream/``: corpora larger than memory: readers, windows of rows, score_to_file
* ``mbr/``: MBR decoding and QE reranking: decode, decode_to_file, n-best

Above the registry (``mbr`` builds metrics by name), below the adapters, the server and the CLI.
"""
