"""The kinds of benchmark this plugin runs, the one place that names them all: the run hands
this value to the results, the history and the report, which ask it rather than the record
which kind it is. A new kind is a package exporting its
:class:`~pytest_infx.results.kind.BenchmarkKind` and one line here."""

from __future__ import annotations

from typing import Final

from pytest_infx.agentic.kind import KIND as AGENTIC
from pytest_infx.fixedseq.kind import KIND as FIXED_SEQ_LEN
from pytest_infx.results.kind import Kinds
from pytest_infx.speedbench.kind import KIND as SPEEDBENCH

KINDS: Final = Kinds((SPEEDBENCH, AGENTIC, FIXED_SEQ_LEN))
