"""What the lint rules look at, gathered once.

The context is a frozen value so rules cannot change what other rules see. Expensive derived data
(the parsed changelog, the diff against the base) is computed on first use and kept in typed
fields of the context's :class:`Derived` values and of each rule family's :class:`Facts`, so
running every rule as its own pytest item parses the changelog only once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pytest_infx.files.git import commit, listed_files, read_base, ref_exists
from pytest_infx.files.git import read_base_file as read_base_file
from pytest_infx.files.store import stat_signature
from pytest_infx.files.textio import read_head, read_input
from pytest_infx.lint.masters import MasterBlock, changed_master_keys, master_files, master_keys
from pytest_infx.lint.scope import ChangeSet, PullRequest, changes_since
from pytest_infx.recipes.cache import signature
from pytest_infx.settings import DEFAULT_GOLDEN_DIR, DEFAULT_RECIPES_DIR
from pytest_infx.usage import UsageError, existing_folder

if TYPE_CHECKING:
    from pytest_infx.engines.registry import EngineRegistry
    from pytest_infx.files.store import PickleCache
    from pytest_infx.recipes.loader import Tree

CHANGELOG_NAME = "perf-changelog.yaml"
DEFAULT_BASE_REF = "origin/main"
RECIPE_DIRS: tuple[str, ...] = (DEFAULT_RECIPES_DIR,)
GOLDEN_DIR = DEFAULT_GOLDEN_DIR
SCENARIO_TYPES: tuple[str, ...] = ("fixed-seq-len", "agentic-coding")
MASTER_CONFIGS = "configs/*-master.yaml"

_T = TypeVar("_T")
_SHELL_SUFFIXES = frozenset({".sh", ".bash"})
_YAML_SUFFIXES = frozenset({".yaml", ".yml"})
_SHEBANG = re.compile(rb"^#!\s*\S*/(?:env\s+(?:-\S+\s+)*)?(?:ba)?sh\b")
_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "build", "dist"})


@dataclass(frozen=True)
class ChangelogOnly:
    """What a new changelog entry that changes no config key may be: ``forbid`` (the default:
    an entry without a change moves no point), ``repeat`` (it repeats an earlier entry's
    config-keys and description, as InferenceX's results recovery appends them) or ``match``
    (a description line matches ``pattern``)."""

    mode: str = "forbid"
    pattern: str | None = None

    @classmethod
    def parse(cls, value: str) -> ChangelogOnly:
        """Read the ini value; a value that is none of the forms raises ``ValueError`` naming
        them."""
        text = value.strip()
        if text in ("", "forbid"):
            return cls()
        if text == "repeat":
            return cls("repeat")
        if text.startswith("match:"):
            pattern = text.removeprefix("match:").strip()
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression ({exc})") from None
            if pattern:
                return cls("match", pattern)
        raise ValueError(f"{value!r} is not one of forbid, repeat, match:REGEX")

    def describe(self) -> str:
        if self.mode == "repeat":
            return "repeat an earlier entry's config-keys and description"
        return f"have a description line matching {self.pattern!r}"


@dataclass(frozen=True)
class LintContext:
    """Inputs of the lint rules.

    ``base_changelog`` is the changelog at ``base_ref`` (``b""`` when the ref exists but has no
    changelog yet, ``None`` when there is no base to compare with). ``recipe_keys`` and
    ``changed_keys`` come from the recipe loader; ``None`` means unknown, and the rules that need
    them are skipped rather than passed. When they are not given, :meth:`keys` and
    :meth:`changed` compute them on first use from ``recipes_dir`` (through ``load_tree`` when
    the caller already holds the tree) and ``load_changed_keys``, because reading the base's
    recipes from git costs more than every other rule together and most rules never need it.
    ``pr_repo`` is ``org/repo`` for canonical PR links; ``None`` infers it from the base
    changelog.

    With a base and without ``audit``, the context is in *PR mode*: the change-scoped rules
    judge only what changed since the base (appended changelog entries, changed lines of
    changed scripts). ``audit`` (or a missing base) judges the whole history; ``base_missing``
    names the ref that was asked for and not found, so the run can say so. ``pull`` says
    where the change goes (its PR number, or the main branch) for the pr-link rule.
    ``changelog_only`` says which new entries may change no config key.
    """

    root: Path
    changelog_path: Path
    base_ref: str | None = None
    base_changelog: bytes | None = None
    recipe_keys: frozenset[str] | None = None
    changed_keys: frozenset[str] | None = None
    comment_files: tuple[Path, ...] = ()
    pr_repo: str | None = None
    recipes_dir: Path | None = None
    golden_dir: Path | None = None
    load_tree: Callable[[], Tree] | None = field(default=None, compare=False, repr=False)
    load_changed_keys: Callable[[LintContext], frozenset[str] | None] | None = field(
        default=None, compare=False, repr=False
    )
    load_engines: Callable[[], EngineRegistry] | None = field(
        default=None, compare=False, repr=False
    )
    store: PickleCache | None = field(default=None, compare=False, repr=False)
    base_sha: str | None = None
    audit: bool = False
    base_missing: str | None = None
    pull: PullRequest = field(default_factory=PullRequest)
    scenario_types: tuple[str, ...] = SCENARIO_TYPES
    master_configs: str | None = MASTER_CONFIGS
    changelog_only: ChangelogOnly = field(default_factory=ChangelogOnly)
    derived: Derived = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "derived", Derived(self))

    def facts(self, family: type[_F]) -> _F:
        """The values a family of rules shares (see :class:`Facts`), one instance per
        context."""
        return self.derived.family(family)

    def stored(self, name: str, key: Callable[[], str], compute: Callable[[], _T]) -> _T:
        """``compute()``, kept in the store under ``name`` while ``key`` (naming every input
        of the value) stays the same; computed afresh without a store."""
        if self.store is None:
            return compute()
        return self.store.get(name, key(), compute)

    def tree_signature(self) -> str:
        """Changes with any YAML file under the recipe folder (bases included)."""
        return self.derived.tree_signature

    def golden_signature(self) -> str:
        """Changes with any file in the golden folder (curves and their registry)."""
        return self.derived.golden_signature

    def base_commit(self) -> str | None:
        """The commit ``base_ref`` names now (a moved ref is a new base)."""
        return self.derived.base_commit

    def relpath(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def engines(self) -> EngineRegistry:
        """The engine adapters the recipe rules ask: the pytest run's, else the installed
        packages' (``infx lint``)."""
        if self.load_engines is not None:
            return self.load_engines()
        from pytest_infx.engines.registry import installed

        return installed()

    def tree(self) -> Tree | None:
        """The recipe tree under ``recipes_dir``, or ``None`` when there is no such folder."""
        return self.derived.tree

    def keys(self) -> frozenset[str] | None:
        """The config keys: given, else the recipe keys (when every recipe file loads: a file
        that does not load may hold any key, so then they are unknown) together with the
        top-level keys of the master configs."""
        if self.recipe_keys is not None:
            return self.recipe_keys
        return self.derived.keys

    def keys_signature(self) -> str:
        masters = [str(p) for p in master_files(self.root, self.master_configs)]
        return f"{self.tree_signature()}:{stat_signature(masters, str(self.root))}"

    def master_keys(self) -> dict[str, MasterBlock] | None:
        """Top-level keys of ``configs/*-master.yaml``; ``None`` when there are none."""
        return self.derived.master_keys

    def changed(self) -> frozenset[str] | None:
        """The config keys changed since the base: given, or computed on first use from the
        recipes and the master configs (unknown when either side cannot say)."""
        if self.changed_keys is not None or self.load_changed_keys is None:
            return self.changed_keys
        return self.derived.changed

    @property
    def pr_mode(self) -> bool:
        """Judge the change, not the history: a base exists and no audit was asked for."""
        return not self.audit and self.base_ref is not None and self.base_changelog is not None

    def change_set(self) -> ChangeSet | None:
        """Files and lines changed since the base; ``None`` without a base."""
        if (self.base_sha or self.base_ref) is None or self.base_changelog is None:
            return None
        return self.derived.change_set

    def scope(self) -> ChangeSet | None:
        """What the change-scoped rules judge: the change in PR mode, else ``None`` (all)."""
        return self.change_set() if self.pr_mode else None

    def comment_targets(self) -> tuple[Path, ...]:
        """The comment-checked files a rule judges: in PR mode the changed ones only."""
        changes = self.scope()
        if changes is None:
            return self.comment_files
        return tuple(p for p in self.comment_files if changes.touches(self.relpath(p)))

    @property
    def changelog_rel(self) -> str:
        return self.relpath(self.changelog_path)

    def head_changelog(self) -> bytes | None:
        """The working-tree changelog, or ``None`` when the file does not exist."""
        return self.derived.head_changelog


class Facts:
    """Values a family of rules shares, each a typed ``functools.cached_property`` computed
    from the context on first use: running every rule as its own pytest item then parses a
    file or walks a folder once. A family subclasses it and reads its instance with
    :meth:`LintContext.facts`."""

    def __init__(self, ctx: LintContext) -> None:
        self.ctx = ctx


_F = TypeVar("_F", bound=Facts)


class Derived(Facts):
    """The context's own derived values, and the instance of each family's :class:`Facts`.
    The context is a frozen value so that no rule changes what another sees; what is derived
    from it is filled in here, once."""

    def __init__(self, ctx: LintContext) -> None:
        super().__init__(ctx)
        self._families: dict[type[Facts], Facts] = {}

    def family(self, kind: type[_F]) -> _F:
        found = self._families.get(kind)
        if not isinstance(found, kind):
            found = kind(self.ctx)
            self._families[kind] = found
        return found

    @cached_property
    def tree_signature(self) -> str:
        folder = self.ctx.recipes_dir
        if folder is None or not folder.is_dir():
            return f"no recipes at {folder}"
        return signature(folder)

    @cached_property
    def golden_signature(self) -> str:
        folder = self.ctx.golden_dir
        if folder is None or not folder.is_dir():
            return f"no golden folder at {folder}"
        return stat_signature(sorted(str(p) for p in folder.iterdir()), str(folder))

    @cached_property
    def base_commit(self) -> str | None:
        ctx = self.ctx
        if ctx.base_sha is not None or ctx.base_ref is None:
            return ctx.base_sha
        return commit(ctx.root, ctx.base_ref)

    @cached_property
    def tree(self) -> Tree | None:
        ctx = self.ctx
        if ctx.load_tree is not None:
            return ctx.load_tree()
        if ctx.recipes_dir is None or not ctx.recipes_dir.is_dir():
            return None
        # the recipe schema costs more than every rule's import: paid by a run that reads it
        from pytest_infx.recipes.loader import read_tree

        return read_tree(ctx.recipes_dir)

    @cached_property
    def keys(self) -> frozenset[str] | None:
        ctx = self.ctx

        def compute() -> frozenset[str] | None:
            tree = ctx.tree()
            masters = ctx.master_keys()
            if (tree is None and masters is None) or (tree is not None and tree.errors):
                return None
            recipes = frozenset(source.recipe.key for source in tree.sources) if tree else ()
            return frozenset(recipes) | frozenset(masters or ())

        return ctx.stored("recipes.keys", ctx.keys_signature, compute)

    @cached_property
    def master_keys(self) -> dict[str, MasterBlock] | None:
        return master_keys(self.ctx.root, self.ctx.master_configs)

    @cached_property
    def changed(self) -> frozenset[str] | None:
        ctx = self.ctx
        load = ctx.load_changed_keys
        if load is None:
            return ctx.changed_keys
        base = ctx.base_commit() or ctx.base_ref

        def compute() -> frozenset[str] | None:
            recipes = load(ctx) if ctx.tree() is not None else frozenset()
            masters: frozenset[str] | None = frozenset()
            if base is not None and ctx.master_keys() is not None:
                masters = changed_master_keys(ctx.root, ctx.master_configs, base)
            if recipes is None or masters is None:
                return None
            if ctx.tree() is None and ctx.master_keys() is None:
                return None
            return recipes | masters

        return ctx.stored(
            "recipes.changed", lambda: f"{ctx.base_commit()}:{ctx.keys_signature()}", compute
        )

    @cached_property
    def change_set(self) -> ChangeSet | None:
        base = self.ctx.base_sha or self.ctx.base_ref
        return None if base is None else changes_since(self.ctx.root, base)

    @cached_property
    def head_changelog(self) -> bytes | None:
        try:
            return read_input(self.ctx.changelog_path)
        except FileNotFoundError:
            return None


def repository_root(what: str, path: Path) -> Path:
    """A lint root that was given: lint reads the head of every file under it, so a folder
    that is no repository (``/``, ``/proc``) would be read whole and never finish. A Git top
    level, or a folder with the changelog or the recipe folder, is one; anything else is a
    usage error."""
    accepted = (
        f"give the repository's top folder (a Git top level, or one with {CHANGELOG_NAME} or "
        f"{DEFAULT_RECIPES_DIR}/)"
    )
    existing_folder(what, path, accepted)
    marks = (path / ".git", path / CHANGELOG_NAME, path / DEFAULT_RECIPES_DIR)
    if not any(os.path.lexists(mark) for mark in marks):
        raise UsageError(
            f"{what} {path}: is not a repository (no .git, {CHANGELOG_NAME} or "
            f"{DEFAULT_RECIPES_DIR}/); {accepted}"
        )
    return path


def default_base_ref(root: Path) -> str | None:
    """``origin/main`` when the clone has it, else ``None`` (no base: base-relative rules skip)."""
    return DEFAULT_BASE_REF if ref_exists(root, DEFAULT_BASE_REF) else None


def _candidate_paths(root: Path) -> Iterable[str]:
    listed = listed_files(root)
    if listed is not None:
        return listed
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        rel = Path(folder).relative_to(root)
        found.extend((rel / name).as_posix() for name in sorted(files))
    return found


def _has_shell_shebang(path: Path) -> bool:
    try:
        return _SHEBANG.match(read_head(path, 128)) is not None
    except OSError:
        return False


def find_comment_files(
    root: Path, *, recipe_dirs: tuple[str, ...] = RECIPE_DIRS
) -> tuple[Path, ...]:
    """Shell scripts anywhere (``*.sh``, ``*.bash``, or no suffix and a bash/sh shebang) and YAML
    files under the recipe folders. Uses git's file list, so ignored files are never linted."""
    prefixes = tuple(f"{folder.strip('/')}/" for folder in recipe_dirs)
    chosen: list[Path] = []
    for rel in _candidate_paths(root):
        suffix = Path(rel).suffix
        path = root / rel
        if suffix in _SHELL_SUFFIXES or (suffix in _YAML_SUFFIXES and rel.startswith(prefixes)):
            if path.is_file():
                chosen.append(path)
        elif not suffix and _has_shell_shebang(path):
            chosen.append(path)
    return tuple(chosen)


def build_context(
    root: Path | str,
    *,
    base_ref: str | None = None,
    recipe_keys: Iterable[str] | None = None,
    changed_keys: Iterable[str] | None = None,
    changelog: str = CHANGELOG_NAME,
    comment_files: Iterable[Path] | None = None,
    recipe_dirs: tuple[str, ...] = RECIPE_DIRS,
    pr_repo: str | None = None,
    golden_dir: Path | str | None = GOLDEN_DIR,
    load_tree: Callable[[], Tree] | None = None,
    load_changed_keys: Callable[[LintContext], frozenset[str] | None] | None = None,
    load_engines: Callable[[], EngineRegistry] | None = None,
    store: PickleCache | None = None,
    base_optional: bool = False,
    audit: bool = False,
    pull: PullRequest | None = None,
    scenario_types: Iterable[str] = SCENARIO_TYPES,
    master_configs: str | None = MASTER_CONFIGS,
    changelog_only: ChangelogOnly | None = None,
) -> LintContext:
    """Gather the context; costs at most two ``git`` calls. ``base_ref=None`` means no base, so
    base-relative rules are skipped and the rest judge everything; with ``base_optional`` a
    ``base_ref`` that does not exist means the same (the default ``origin/main`` of a clone
    without it), and ``base_missing`` keeps its name for the warning."""
    root_path = Path(root).resolve()
    changelog_path = root_path / changelog
    commit, base = read_base(root_path, base_ref, changelog_path) if base_ref else (None, None)
    missing = None
    if commit is None and base_optional:
        missing, base_ref = base_ref, None
    files = (
        find_comment_files(root_path, recipe_dirs=recipe_dirs)
        if comment_files is None
        else tuple(Path(p) if Path(p).is_absolute() else root_path / p for p in comment_files)
    )
    return LintContext(
        root=root_path,
        changelog_path=changelog_path,
        base_ref=base_ref,
        base_changelog=base,
        recipe_keys=None if recipe_keys is None else frozenset(recipe_keys),
        changed_keys=None if changed_keys is None else frozenset(changed_keys),
        comment_files=files,
        pr_repo=pr_repo,
        recipes_dir=root_path / recipe_dirs[0] if recipe_dirs else None,
        golden_dir=None if golden_dir is None else root_path / golden_dir,
        load_tree=load_tree,
        load_changed_keys=load_changed_keys or _changed_since_base,
        load_engines=load_engines,
        store=store,
        base_sha=commit,
        audit=audit,
        base_missing=missing,
        pull=pull or PullRequest(),
        scenario_types=tuple(scenario_types),
        master_configs=master_configs,
        changelog_only=changelog_only or ChangelogOnly(),
    )


def _changed_since_base(ctx: LintContext) -> frozenset[str] | None:
    from pytest_infx.lint.changed import changed_since_base

    return changed_since_base(ctx)
