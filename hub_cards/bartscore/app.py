"""Gradio widget of the bartscore module (this Space holds bartscore.py next to this file)."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).with_name("bartscore.py")))
launch_gradio_widget(module)
