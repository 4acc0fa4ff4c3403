"""The private pytest and pytest-xdist names the plugin still touches, and the versions of each
distribution they were checked with.

Neither project promises these names; a release may rename one without notice. They are kept
where no public way does the job (each entry says why), the README's Slurm section lists them,
pyproject's requirements carry the same ranges, and a test fails when the installed version is
outside a range or no longer has one of the names, so an upgrade breaks a test rather than a
sweep.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import Version

CHECKED: dict[str, str] = {
    "pytest": ">=8.3,<9.2",
    "pytest-xdist": ">=3.6,<3.9",
}
"""Each distribution's versions the names below were read against (pytest 8.3.0 to 9.1.1,
pytest-xdist 3.6.0 to 3.8.0); pyproject requires the same ranges."""


@dataclass(frozen=True)
class PrivateName:
    distribution: str
    owner: str
    """``module:Class`` (or ``module`` alone) that has the name."""
    name: str
    user: str
    """The pytest_infx module that touches it."""
    why: str


NAMES: tuple[PrivateName, ...] = (
    PrivateName(
        "pytest-xdist",
        "xdist.dsession:DSession",
        "_clone_node",
        "pytest_infx.plugin.slurm_replace",
        "replaced on the running session so that a replacement worker's srun job starts on a "
        "thread: xdist waits for the new interpreter on its event loop, and an srun "
        "interpreter answers only once Slurm has allocated the job",
    ),
    PrivateName(
        "pytest-xdist",
        "xdist.dsession:DSession",
        "_active_nodes",
        "pytest_infx.plugin.slurm_replace",
        "a replacement still in the queue stands in this set, so the controller waits for it "
        "instead of ending the run",
    ),
    PrivateName(
        "pytest",
        "pytest:Session",
        "_fixturemanager",
        "pytest_infx.plugin.collect",
        "a recipe's items are functions made at collection; their fixture closure is "
        "computed once per kind of item instead of by pytest once per item, which costs "
        "half as much again as the whole warm collection of 3,000 points",
    ),
    PrivateName(
        "pytest",
        "_pytest.mark.expression",
        "Expression",
        "pytest_infx.plugin.collect",
        "evaluates the -m expression as pytest will, to tell whether it selects recipe items "
        "and no plain test, before collection, which is when the recipe folder must be added",
    ),
    PrivateName(
        "pytest",
        "_pytest._code.code",
        "TerminalRepr",
        "pytest_infx.plugin.lint",
        "type annotation only (the return type of Item.repr_failure); never imported at run time",
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
        f"pytest_infx.plugin.privateapi), then widen CHECKED and pyproject's requirement"
    )
