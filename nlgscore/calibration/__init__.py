"""Calibrating a BERTScore backbone: the BERTScore paper's recipe, and its pieces.

``layers.py`` scores every layer in one pass and picks the layer by segment-level Pearson with
human scores; ``baseline.py`` computes the rescale baseline from random pairs of unrelated
sentences; ``recipe.py`` runs both on a human-scores folder and writes the one calibration file
that ``BERTScorer(calibration=PATH)`` reads (``nlgscore calibrate MODEL --data FOLDER``).

This package sits above ``meta`` (it reads meta-evaluation folders and uses its statistics) and
below ``cli``.
"""
