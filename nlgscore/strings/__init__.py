"""String-matching metrics as registry scorers: chrF and BLEU (sacreBLEU), ROUGE (rouge-score).

``scorers``: :class:`ChrFScorer` (``chrf``), :class:`BLEUScorer` (``bleu``, ``bleu:moses``) and
:class:`RougeScorer` (``rouge:1|2|L``), scored per item through the one template, with a
sacreBLEU corpus statistic (``corpus_score``) where the metric has one.
"""
