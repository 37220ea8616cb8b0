"""Gradio widget of the bertscore module (this Space holds bertscore.py next to this file)."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).with_name("bertscore.py")))
launch_gradio_widget(module)
