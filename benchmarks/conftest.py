"""pytest over the lab: the workload scripts are programs run by name (``python -m benchmarks NAME``),
some importing optional frameworks at the top, so their files are not collected for doctests."""

collect_ignore_glob = ["scripts/*.py"]
