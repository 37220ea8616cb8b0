"""Meta-evaluation tasks: each data set's descriptor and the runner that turns scores into a ``MetaTable``.

``wmt19`` (``wmt19_darr``), ``wmt21`` (``wmt21_da``), ``mqm`` (``human_scores``) and ``summeval``
(``bootstrap_tasks``) return a ``MetaTable`` (``runner``); the first three are descriptors of the
generic runner (``generic.run``). ``descriptors`` lists them for ``nlgscore meta``.

>>> sorted(TASKS)
['mqm', 'summeval', 'wmt19', 'wmt21']
"""

from nlgscore.meta.data.wmt21 import HUMAN
from nlgscore.meta.tasks.bootstrap_tasks import summeval
from nlgscore.meta.tasks.human_scores import mqm
from nlgscore.meta.tasks.runner import MetaTable
from nlgscore.meta.tasks.wmt19_darr import wmt19
from nlgscore.meta.tasks.wmt21_da import wmt21

TASKS = {"wmt19": wmt19, "wmt21": wmt21, "summeval": summeval, "mqm": mqm}
__all__ = ["HUMAN", "MetaTable", "TASKS", "mqm", "summeval", "wmt19", "wmt21"]
