"""The internal names of pytest, pytest-xdist and syrupy that :mod:`pytest_infx.compat` touches,
and the versions of each distribution they were checked with.

None of the three promises these names; a release may rename one without notice. They are kept
where no public way does the job (each entry says why), pyproject's requirements carry the same
ranges, and tests/compat fails when the installed version is outside a range or no longer has
one of the names, so an upgrade breaks a test rather than a sweep. The lowest version of each
range is the one the lower-bounds test installs.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import Version

CHECKED: dict[str, str] = {
    "pytest": ">=9.0",
    "pytest-xdist": ">=3.6.1,<3.9",
    "syrupy": ">=6.0,<8",
}
"""Each distribution's versions the names below were read against (pytest 9.0.0 to 9.2.0,
pytest-xdist 3.6.1 to 3.8.0, syrupy 6.0.0 to 7.0.3); pyproject requires the same ranges. pytest
has no upper bound: nothing is known to break on a newer release, so pip never downgrades a
project's pytest for us, and tests/compat checks the names on the installed pytest and, in a
fresh environment, on the newest release. pytest 9.2 changed three things the plugin now
handles on every 9.x: a ``Function`` made without a callspec takes its node id from
``originalname``, a ``bool`` ini that is not one is a usage error that does not name the key,
and xdist's ``--dist loadgroup`` no longer writes the group into a node id (``Node._id`` and
``Node._nodeid`` below, each on its releases). Below the ranges: pytest 8 prints a lint item's
failure without its message in the short summary and collects a host's own lint tests
differently, and syrupy 5 has a different extension API."""


@dataclass(frozen=True)
class PrivateName:
    distribution: str
    owner: str
    """``module:Class`` (or ``module`` alone) that has the name."""
    name: str
    user: str
    """The pytest_infx.compat module that touches it."""
    why: str
    versions: str = ""
    """The releases that have the name, where not every release of CHECKED does (empty: all)."""


_XDIST = "pytest_infx.compat.xdist"
_REPLACE = (
    "a replacement Slurm worker starts on a thread: xdist waits for the new interpreter on its "
    "event loop, and an srun interpreter answers only once Slurm has allocated the job"
)

NAMES: tuple[PrivateName, ...] = (
    PrivateName("pytest-xdist", "xdist.dsession:DSession", "_clone_node", _XDIST, _REPLACE),
    PrivateName(
        "pytest-xdist",
        "xdist.dsession:DSession",
        "_active_nodes",
        _XDIST,
        "a replacement still in the queue stands in this set, so the controller waits for it "
        "instead of ending the run",
    ),
    PrivateName("pytest-xdist", "xdist.dsession:DSession", "nodemanager", _XDIST, _REPLACE),
    PrivateName("pytest-xdist", "xdist.dsession:DSession", "queue", _XDIST, _REPLACE),
    PrivateName(
        "pytest-xdist",
        "xdist.dsession:DSession",
        "shuttingdown",
        _XDIST,
        "a queued replacement is cancelled once the run is ending",
    ),
    PrivateName(
        "pytest-xdist",
        "xdist.dsession:DSession",
        "shouldstop",
        _XDIST,
        "a run whose every Slurm worker failed to start stops with the reason",
    ),
    PrivateName("pytest-xdist", "xdist.workermanage:NodeManager", "setup_node", _XDIST, _REPLACE),
    PrivateName(
        "pytest-xdist",
        "xdist.report",
        "report_collection_diff",
        _XDIST,
        "two Slurm workers that collected different items fail with xdist's own message",
    ),
    PrivateName(
        "pytest",
        "pytest:Session",
        "_fixturemanager",
        "pytest_infx.compat.pytest",
        "a recipe's items are functions made at collection; their fixture closure is "
        "computed once per kind of item instead of by pytest once per item, which costs "
        "half as much again as the whole warm collection of 3,000 points",
    ),
    PrivateName(
        "pytest",
        "_pytest.mark.expression",
        "Expression",
        "pytest_infx.compat.pytest",
        "evaluates the -m expression as pytest will, to tell whether it selects recipe items "
        "and no plain test, before collection, which is when the recipe folder must be added",
    ),
    PrivateName(
        "pytest",
        "_pytest.config.findpaths",
        "determine_setup",
        "pytest_infx.compat.pytest",
        "a path option's value in its space-separated form moves pytest's rootdir, which is "
        "picked before the plugin's options are known; picked again with them, the two differ",
    ),
    PrivateName(
        "pytest",
        "_pytest.nodes:Node",
        "_id",
        "pytest_infx.compat.pytest",
        "xdist's --dist loadgroup writes a recipe item's server group into its node id by "
        "assigning _nodeid, which pytest 9.2 no longer reads; without the group, a server's "
        "items go to several workers and the server starts on each",
        versions=">=9.2",
    ),
    PrivateName(
        "pytest",
        "_pytest.nodes:Node",
        "_nodeid",
        "pytest_infx.compat.pytest",
        "the node id up to pytest 9.1, where xdist's own write of the group takes effect; "
        "written only where it did not",
        versions="<9.2",
    ),
    PrivateName(
        "pytest",
        "_pytest._code.code",
        "TerminalRepr",
        "pytest_infx.compat.pytest",
        "the return type of Item.repr_failure, for the lint items' annotations",
    ),
    PrivateName(
        "syrupy",
        "syrupy.extensions.single_file",
        "SingleFileSnapshotExtension",
        "pytest_infx.compat.syrupy",
        "the golden curves are a syrupy extension: one YAML file a curve, compared with tolerance",
    ),
    PrivateName(
        "syrupy",
        "syrupy.data",
        "SnapshotCollection",
        "pytest_infx.compat.syrupy",
        "a partial --snapshot-update merges the measured cells into the golden file it writes",
    ),
    PrivateName(
        "syrupy",
        "syrupy.location",
        "PyTestLocation",
        "pytest_infx.compat.syrupy",
        "the golden folder is found from the test location syrupy passes",
    ),
)


def outside_checked(distribution: str, installed: str) -> str | None:
    """Why the installed version may not have the private names as they were checked, else
    ``None``."""
    if Version(installed) in SpecifierSet(CHECKED[distribution]):
        return None
    names = ", ".join(
        f"{entry.owner.split(':')[-1]}.{entry.name}"
        for entry in NAMES
        if entry.distribution == distribution
    )
    return (
        f"{distribution} {installed} is outside the versions pytest-infx was checked with "
        f"({CHECKED[distribution]}); check the private names it touches there ({names}; see "
        f"pytest_infx.compat.versions), then widen CHECKED and pyproject's requirement"
    )
