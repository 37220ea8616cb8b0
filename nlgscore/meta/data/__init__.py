"""Reading meta-evaluation data: human judgments, system outputs and precomputed metric scores.

* ``files``: the one text-file rule (UTF-8, BOM dropped, errors naming the file) and atomic writes;
* ``loaders``: the data folder, WMT19 daRR and SummEval JSONL files;
* ``wmt21``: WMT21 DA folders (any to-English pair) and the daRR pairs derived from their DA;
* ``ratings``: any MQM/DA human-scores folder (mt-metrics-eval's layout);
* ``wmt_sets``: WMT24/WMT25 test sets in any published layout: WMT's folder (``wmt_text``, ``esa`` CSVs,
  ``mqm_tsv``), mt-metrics-eval's folder (``human-scores/``), WMT25's paragraph JSONL (``paragraphs``);
* ``mtme`` / ``precomputed``: score files (mt-metrics-eval's and nlgscore's formats);
* ``alignment``: the check that segment ids follow the text lines.
"""
