"""The three ``evaluate`` modules, one folder each (``<name>/<name>.py`` and its card README.md).

In a checkout ``evaluate.load("metrics/<name>")`` loads them from here; the wheel ships this
folder as the package ``nlgscore.evaluate_modules`` so that ``evaluate.load(
nlgscore.evaluate_module("<name>"))`` works from any folder.
"""
