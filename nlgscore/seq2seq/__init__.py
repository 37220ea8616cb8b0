"""The likelihood family: metrics that force-decode one text given another with a seq2seq model.

``likelihood.py`` (the teacher-forced log-prob engine), ``token_forward.py`` (its opt-in
forward on packed tokens), ``cuda_graphs.py`` (that forward's CUDA graphs by source and target
bucket), ``prism.py`` with its loader and
tokenizer (``prism_loading.py``, ``prism_tokenizer.py``), and ``bartscore.py``.
"""
