"""String-matching metrics as registry scorers: chrF, BLEU and TER (sacreBLEU), ROUGE (rouge-score).

``scorers``: :class:`ChrFScorer` (``chrf``), :class:`BLEUScorer` (``bleu``, ``bleu:intl``,
``bleu:moses``), :class:`TERScorer` (``ter``, lower is better) and :class:`RougeScorer`
(``rouge:1|2|L``), scored per item through the one template, with a
sacreBLEU corpus statistic (``corpus_score``) where the metric has one.
"""
