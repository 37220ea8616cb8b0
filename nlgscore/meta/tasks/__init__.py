"""Meta-evaluation tasks: each data set's descriptor and the runner that turns scores into a ``MetaTable``.

``wmt19`` (``wmt19_darr``), ``wmt21`` (``wmt21_da``), ``summeval`` (``summeval_docs``), ``mqm``
(``human_scores``), ``wmt24`` and ``wmt25`` (``wmt24_25``) are thin wrappers of one runner (``generic.run``) over their descriptors; each
returns a ``MetaTable`` (``runner``). ``bartscore_bench`` (``bartscore_bench``) runs the BARTScore
benchmark's 16 data sets with their authors' statistics; ``wmt16``, ``wmt17`` and ``wmt18``
(``wmt16_18``) WMT's metrics-task packages as the WMT18 report evaluates them. ``descriptors``
lists them for ``nlgscore meta``.

>>> sorted(TASKS)
['bartscore-bench', 'mqm', 'summeval', 'wmt16', 'wmt17', 'wmt18', 'wmt19', 'wmt21', 'wmt24', 'wmt25']
"""

from nlgscore.meta.data.wmt21 import HUMAN
from nlgscore.meta.tasks.bartscore_bench import bartscore_bench
from nlgscore.meta.tasks.human_scores import mqm
from nlgscore.meta.tasks.runner import MetaTable
from nlgscore.meta.tasks.summeval_docs import summeval
from nlgscore.meta.tasks.wmt16_18 import wmt16, wmt17, wmt18
from nlgscore.meta.tasks.wmt19_darr import wmt19
from nlgscore.meta.tasks.wmt21_da import wmt21
from nlgscore.meta.tasks.wmt24_25 import wmt24, wmt25

TASKS = {
    "bartscore-bench": bartscore_bench,
    "wmt19": wmt19,
    "wmt21": wmt21,
    "summeval": summeval,
    "mqm": mqm,
    "wmt16": wmt16,
    "wmt17": wmt17,
    "wmt18": wmt18,
    "wmt24": wmt24,
    "wmt25": wmt25,
}
__all__ = [
    "HUMAN",
    "MetaTable",
    "TASKS",
    "bartscore_bench",
    "mqm",
    "summeval",
    "wmt16",
    "wmt17",
    "wmt18",
    "wmt19",
    "wmt21",
    "wmt24",
    "wmt25",
]
