"""Gradio widget of the prism module (this Space holds prism.py next to this file)."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).with_name("prism.py")))
launch_gradio_widget(module)
