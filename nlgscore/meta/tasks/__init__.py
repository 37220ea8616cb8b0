"""Meta-evaluation tasks: each data set's descriptor and the runner that turns scores into a ``MetaTable``.

``wmt19`` and ``summeval`` (``bootstrap_tasks``), ``wmt21`` (``wmt21_da``) and ``mqm``
(``human_scores``) return a ``MetaTable`` (``runner``); the last two are descriptors of the generic
runner (``generic.run``). ``descriptors`` lists them for ``nlgscore meta``.

>>> sorted(TASKS)
['mqm', 'summeval', 'wmt19', 'wmt21']
"""

from nlgscore.meta.data.wmt21 import HUMAN
from nlgscore.meta.tasks.bootstrap_tasks import summeval, wmt19
from nlgscore.meta.tasks.human_scores import mqm
from nlgscore.meta.tasks.runner import MetaTable
from nlgscore.meta.tasks.wmt21_da import wmt21

TASKS = {"wmt19": wmt19, "wmt21": wmt21, "summeval": summeval, "mqm": mqm}
__all__ = ["HUMAN", "MetaTable", "TASKS", "mqm", "summeval", "wmt19", "wmt21"]
