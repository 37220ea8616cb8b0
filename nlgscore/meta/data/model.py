"""The one data model of meta-evaluation: systems x items, references, sources, human scores per level.

After mt-metrics-eval's ``EvalSet``: ``hyps[s][i]`` is system ``s``'s output for item ``i`` (a
segment, a document); ``refs[k][i]`` is reference ``k`` of item ``i``; ``human["segment"]`` is a
``(systems, items)`` matrix with NaN where a (system, item) was not rated and ``human["system"]``
one score per system; ``docs[i]``, where the data set has documents, is item ``i``'s document id
(what ``--context k`` reads the previous segments of). A loader returns an ``EvalSet``; the runner (``nlgscore.meta.tasks.generic``)
scores it and computes a descriptor's measures from it. Relative-ranking judgments derive from
it: ``darr_pairs`` lists the (item, better system, worse system) pairs of a level.

>>> data = EvalSet("toy", ["A", "B"], [["a cat", "a dog"], ["the cat", "dogs"]], [["the cat", "a dog"]],
...                human={"segment": np.array([[1.0, 5.0], [3.0, np.nan]]), "system": np.array([3.0, 3.0])})
>>> data.items, [p.tolist() for p in data.darr_pairs()]
(2, [[0], [1], [0]])
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike

from nlgscore.errors import DataError

PAIR_KEYS = ("darr", "rr")  # derived (item, better row, worse row) pairs a loader read (daRR files)


def _same(value: Any) -> Any:
    """``value`` itself: a derived value handed to a subset as it is."""
    return value


@dataclass
class EvalSet:
    """Systems x items with references, sources and human scores per level (see the module doc).

    A loader returns one; the checks on construction make every system hold one output per item.

    Attributes:
        name: the data set's name (a WMT language pair, ``summeval``), as the rows name it.
        systems: the systems' names, in the order of ``hyps``.
        hyps: ``hyps[s][i]``, system ``s``'s output for item ``i``.
        refs: ``refs[k][i]``, reference ``k`` of item ``i`` (every reference covers every item).
        srcs: the source of each item, where the data set has sources.
        human: the human scores by level: ``"segment"`` a ``(systems, items)`` matrix with NaN where
            a (system, item) was not rated, ``"system"`` one score per system; a data set may add its
            own levels (WMT21 DA's ``"z"``).
        reference: the name of ``refs[0]``, as score files name it (``<metric>-ref<X>.seg.score``).
        lines: the items in the data files, when a limit kept only the first ``items`` of them.
        notes: what the run should report beside its rows (systems left out, fixes applied to the data).
        docs: the document id of each item (a document's items consecutive), where the data set has
            documents: what ``--context k`` reads the previous segments of.

    Raises:
        DataError: the outputs, references, sources or document ids do not have one entry per item,
            or a human level has the wrong shape (the message names the data set).
    """

    name: str
    systems: List[str]
    hyps: List[List[str]]
    refs: List[List[str]]
    srcs: Optional[List[str]] = None
    human: Dict[str, np.ndarray] = field(default_factory=dict)
    reference: str = ""  # the name of refs[0] (score files name it: <metric>-ref<X>.seg.score)
    lines: Optional[int] = None  # items in the data files when a limit kept the first ``items`` only
    notes: List[str] = field(default_factory=list)
    docs: Optional[List[str]] = None  # the document of each item (consecutive items of a document), when known
    _derived: Dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        n = len(self.refs[0]) if self.refs else 0
        if len(self.hyps) != len(self.systems):
            raise DataError(f"{self.name}: {len(self.hyps)} output lists for {len(self.systems)} systems")
        for system, outputs in zip(self.systems, self.hyps):
            if len(outputs) != n:
                raise DataError(f"{self.name}: the outputs of {system} have {len(outputs)} items, the references {n}")
        if any(len(r) != n for r in self.refs) or (self.srcs is not None and len(self.srcs) != n):
            raise DataError(f"{self.name}: references and sources must have one line per item ({n})")
        if self.docs is not None and len(self.docs) != n:
            raise DataError(f"{self.name}: {len(self.docs)} document ids for {n} items (one per item)")
        shapes = {"segment": (len(self.systems), n), "system": (len(self.systems),)}
        for level, scores in self.human.items():
            if level in shapes and np.shape(scores) != shapes[level]:
                raise DataError(
                    f"{self.name}: {level} human scores have shape {np.shape(scores)}, expected {shapes[level]}"
                )

    @property
    def items(self) -> int:
        """How many items (segments, documents) each system has."""
        return len(self.refs[0]) if self.refs else 0

    def derived(self, key: str, make: Callable[[], Any]) -> Any:
        """``make()`` once per data set: human-side work every metric shares (e.g. SPA's p-values).

        Args:
            key: the name the value is kept under; one ``key`` always names the same computation.
            make: builds the value, called only the first time ``key`` is asked for.

        Returns:
            The value ``make`` built for this data set.
        """
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]

    def select_systems(self, rows: ArrayLike) -> "EvalSet":
        """The data set of the systems at ``rows`` only, in that order.

        It keeps their outputs and the rows of every human level whose first axis is the systems;
        what is derived is made again from them (SPA's p-values of these systems), except the
        relative-ranking pairs a loader gave (``derived`` keys in ``PAIR_KEYS``), kept where both
        systems are among them; the notes start empty. The top-k systems of a measure are this.

        Args:
            rows: the positions of the systems kept, in ``systems``.

        Returns:
            A new data set; this one is unchanged.

        Example:
            >>> data = EvalSet("toy", ["A", "B", "C"], [["a"], ["b"], ["c"]], [["a"]],
            ...                human={"system": np.array([1.0, 3.0, 2.0])})
            >>> top = data.select_systems([1, 2])
            >>> top.systems, top.human["system"].tolist()
            (['B', 'C'], [3.0, 2.0])
        """
        rows = [int(r) for r in np.asarray(rows).reshape(-1)]
        n = len(self.systems)
        position = {row: k for k, row in enumerate(rows)}
        human = {
            level: np.asarray(scores)[rows] if np.ndim(scores) >= 1 and np.shape(scores)[0] == n else scores
            for level, scores in self.human.items()
        }
        subset = EvalSet(
            self.name,
            [self.systems[r] for r in rows],
            [self.hyps[r] for r in rows],
            self.refs,
            self.srcs,
            human,
            self.reference,
            self.lines,
            [],
            self.docs,
        )
        for key in PAIR_KEYS:
            if key in self._derived:
                item, better, worse = (np.asarray(a) for a in self._derived[key])
                kept = np.array([b in position and w in position for b, w in zip(better, worse)], dtype=bool)
                pairs = (
                    item[kept].astype(np.int64),
                    np.array([position[b] for b in better[kept]], dtype=np.int64),
                    np.array([position[w] for w in worse[kept]], dtype=np.int64),
                )
                subset.derived(key, functools.partial(_same, pairs))
        return subset

    def darr_pairs(self, level: str = "segment", margin: float = 0.0) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Relative-ranking pairs from the human scores of one level, as WMT's daRR forms them.

        Per item, every two rated systems whose human scores differ by more than ``margin`` make a
        pair, the better one first; items in order, systems in order within an item.

        Args:
            level: the human level read (a ``(systems, items)`` matrix of ``human``).
            margin: the least score difference, exclusive, that makes a pair (WMT's daRR: 25 raw DA
                points; 0 keeps every pair that is not a tie).

        Returns:
            ``(item, better, worse)``: three index arrays of one length, the pair's item and the rows of
            its better and worse system.

        Example:
            >>> data = EvalSet("toy", ["A", "B"], [["a", "b"], ["c", "d"]], [["a", "b"]],
            ...                human={"segment": np.array([[1.0, 5.0], [3.0, np.nan]])})
            >>> [p.tolist() for p in data.darr_pairs()]
            [[0], [1], [0]]
        """
        human = np.asarray(self.human[level], dtype=float)
        items, better, worse = [], [], []
        for i in range(human.shape[1]):
            rated = np.flatnonzero(~np.isnan(human[:, i]))
            for a_pos, a in enumerate(rated):
                for b in rated[a_pos + 1 :]:
                    gap = human[a, i] - human[b, i]
                    if abs(gap) > margin:
                        items.append(i)
                        better.append(a if gap > 0 else b)
                        worse.append(b if gap > 0 else a)
        return np.array(items, dtype=np.int64), np.array(better, dtype=np.int64), np.array(worse, dtype=np.int64)
