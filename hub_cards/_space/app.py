"""Gradio widget of this Space's evaluate module (the one other .py file next to this one)."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

[module] = [path for path in Path(__file__).parent.glob("*.py") if path.name != "app.py"]
launch_gradio_widget(evaluate.load(str(module)))
