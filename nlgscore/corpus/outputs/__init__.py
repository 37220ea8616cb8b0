"""Output files: one resumable, locked driver and its pieces.

* ``resumable.py``: the checkpoint of a partial output: SHA-256, rows, identity; write_atomic
* ``driver.py``: run_chunks: the one resumable driver of score -o, mbr -o and meta's chunks
* ``lock.py``: one run per output: flock, the holder's PID
* ``jsonl.py``: JSON Lines records with file:line errors

Four modules, not one: together they are over the
420-line cap of a module.
"""
