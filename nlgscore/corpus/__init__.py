"""Internal: corpus I/O, the files a run reads and writes chunk by chunk (the public faces are
:mod:`nlgscore.stream` and :mod:`nlgscore.mbr`).

* ``outputs/``: output files: resumable.py, driver.py, lock.py, jsonl.py

Above the contract (``core/``), below the metric table. Module paths here may change without notice.
"""
