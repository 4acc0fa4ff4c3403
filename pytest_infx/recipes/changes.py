"""Which recipe keys changed since a git ref, by point fingerprint.

The base tree is read straight from git objects into a temporary folder (one ``git cat-file
--batch`` process for every file), so ``extends`` resolves exactly as it did at the base and no
checkout is touched. A key changed when a point was added, removed or has a new fingerprint.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from pytest_infx.files.git import GitError, blobs_under, objects, ref_exists, top
from pytest_infx.recipes.errors import RecipeErrors
from pytest_infx.recipes.loader import Tree, read_tree
from pytest_infx.recipes.points import expand

Fingerprints = dict[str, dict[str, str]]


@dataclass(frozen=True)
class KeyChange:
    key: str
    status: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    before: int = 0
    after: int = 0

    def render(self) -> str:
        if self.status != "modified":
            return f"{self.key}: {self.status} ({self.before} -> {self.after} points)"
        return (
            f"{self.key}: {self.before} -> {self.after} points, {len(self.added)} added, "
            f"{len(self.removed)} removed, {len(self.modified)} modified"
        )


def fingerprints(tree: Tree) -> Fingerprints:
    out: Fingerprints = {}
    for source in tree.sources:
        try:
            out[source.recipe.key] = {p.name: p.fingerprint for p in expand(source)}
        except RecipeErrors:
            out[source.recipe.key] = {}
    return out


def tree_at(repo: Path, ref: str, recipes: Path, into: Path) -> Path:
    """Write the recipe folder as it was at ``ref`` under ``into``; return that folder."""
    relative = recipes.resolve().relative_to(top(repo)).as_posix()
    entries = blobs_under(repo, ref, relative)
    for (name, _sha), found in zip(
        entries, objects(repo, [sha for _, sha in entries]), strict=True
    ):
        if found is None:
            raise GitError(f"git cat-file: {name} at {ref} is missing")
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(found.body)
    return into / relative


def compare(before: Fingerprints, after: Fingerprints) -> list[KeyChange]:
    changes: list[KeyChange] = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old is None:
            changes.append(KeyChange(key, "added", tuple(sorted(new or {})), after=len(new or {})))
        elif new is None:
            changes.append(KeyChange(key, "removed", removed=tuple(sorted(old)), before=len(old)))
        else:
            added = tuple(sorted(set(new) - set(old)))
            removed = tuple(sorted(set(old) - set(new)))
            modified = tuple(sorted(n for n in set(old) & set(new) if old[n] != new[n]))
            if added or removed or modified or (not old and not new):
                changes.append(
                    KeyChange(key, "modified", added, removed, modified, len(old), len(new))
                )
    return changes


def changed_since(repo: Path, recipes: Path, ref: str, now: Tree | None = None) -> list[KeyChange]:
    """Keys whose points differ from those at ``ref``; ``now`` is the tree of ``recipes`` when
    the caller has read it already."""
    if not ref_exists(repo, ref):
        raise GitError(f"base ref '{ref}' does not exist in {repo}; fetch it or name another ref")
    with tempfile.TemporaryDirectory(prefix="infx-base-") as tmp:
        base_dir = tree_at(repo, ref, recipes, Path(tmp))
        before = fingerprints(read_tree(base_dir)) if base_dir.exists() else {}
    return compare(before, fingerprints(now if now is not None else read_tree(recipes)))
