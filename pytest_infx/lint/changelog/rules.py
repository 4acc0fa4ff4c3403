"""The changelog rules, one pytest item each, and what they share through the lint context.

In PR mode (a base, no ``--infx-lint-all``) the schema, byte and config-key rules judge only the
entries the change wrote; the append-only, pr-link and coverage rules compare with the base.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import re
from collections.abc import Callable
from functools import cached_property

from pytest_infx.files.store import digest
from pytest_infx.lint.changelog.entries import (
    PLACEHOLDER,
    ChangelogEntry,
    ParsedChangelog,
    parse_changelog,
)
from pytest_infx.lint.changelog.history import (
    ChangelogDiff,
    canonical_pr_url,
    comparable,
    diff_changelog,
)
from pytest_infx.lint.changelog.layout import Lines, byte_findings, entry_offsets
from pytest_infx.lint.context import Facts, LintContext
from pytest_infx.lint.findings import Finding, SkipReason, rule
from pytest_infx.lint.masters import master_files

_WILDCARD = re.compile(r"[*?\[]")


def _compute_parsed_head(ctx: LintContext) -> ParsedChangelog:
    def compute() -> ParsedChangelog:
        data = ctx.head_changelog()
        return parse_changelog(
            data or b"", path=ctx.changelog_rel, scenario_types=ctx.scenario_types
        )

    return ctx.stored(
        "changelog.parsed",
        lambda: digest(ctx.changelog_rel, ctx.head_changelog(), ",".join(ctx.scenario_types)),
        compute,
    )


def parsed_head(ctx: LintContext) -> ParsedChangelog:
    return ctx.facts(_ChangelogFacts).parsed_head


def changed_entries(ctx: LintContext) -> frozenset[int] | None:
    """The head entries the change wrote (new ones and corrected old pr-links); ``None``
    outside PR mode, where every entry is judged."""
    if not ctx.pr_mode:
        return None
    diff = changelog_diff(ctx)
    return frozenset(diff.new_entries) | frozenset(c.index for c in diff.corrections)


def changed_lines(ctx: LintContext) -> Callable[[int], bool] | None:
    """Which changelog lines the change wrote, for the byte rules; ``None`` outside PR mode.
    The appended bytes count whole (separators included), and so does each new entry elsewhere
    with the line above it, where its separator is, unless that line is the base's; of a
    corrected old entry only its pr-link line counts. Bytes the change may not touch are never
    its finding."""
    if not ctx.pr_mode:
        return None
    diff = changelog_diff(ctx)
    base, head = comparable(ctx.base_changelog or b"", ctx.head_changelog() or b"")
    lines = Lines(head)
    offsets = entry_offsets(head)
    spans: list[range] = []
    kept = 0
    if head.startswith(base):
        kept = lines.line(len(base))
        spans.append(range(kept, len(lines.newlines) + 2))
    spans.extend(range(c.line, c.line + 1) for c in diff.corrections)
    for index in diff.new_entries:
        if index < len(offsets):
            end = offsets[index + 1] if index + 1 < len(offsets) else len(head)
            first = lines.line(offsets[index])
            above = first - 1 if first - 1 >= kept else first
            spans.append(range(above, lines.line(end) + 1))
    return lambda line: any(line in span for span in spans)


def _compute_changelog_diff(ctx: LintContext) -> ChangelogDiff:
    def compute() -> ChangelogDiff:
        return diff_changelog(
            ctx.base_changelog or b"",
            ctx.head_changelog() or b"",
            path=ctx.changelog_rel,
            pr_repo=ctx.pr_repo,
        )

    return ctx.stored(
        "changelog.diff",
        lambda: digest(ctx.changelog_rel, ctx.base_changelog, ctx.head_changelog(), ctx.pr_repo),
        compute,
    )


def changelog_diff(ctx: LintContext) -> ChangelogDiff:
    return ctx.facts(_ChangelogFacts).changelog_diff


def new_entries(ctx: LintContext) -> list[ChangelogEntry]:
    """The head entries that are not in the base (valid ones only; the schema rule reports the
    rest)."""
    entries = parsed_head(ctx).entries
    return [
        entry
        for index in changelog_diff(ctx).new_entries
        if index < len(entries) and (entry := entries[index]) is not None
    ]


def _no_changelog(ctx: LintContext) -> str | None:
    if ctx.head_changelog() is None:
        return f"no {ctx.changelog_rel} in {ctx.root}"
    return None


def _conflicted(ctx: LintContext) -> str | None:
    """Why the rules after the schema say nothing about a changelog holding conflict markers:
    the markers are the one finding, and every other rule would only repeat them."""
    if ctx.head_changelog() is not None and parsed_head(ctx).conflicted:
        return "the changelog holds Git conflict markers (see changelog-schema)"
    return None


def _unless_conflicted(reason: Callable[[LintContext], str | None]) -> SkipReason:
    def skip(ctx: LintContext) -> str | None:
        return reason(ctx) or _conflicted(ctx)

    return skip


def _no_base(ctx: LintContext) -> str | None:
    if ctx.base_changelog is None:
        ref = ctx.base_ref or "origin/main"
        return (
            f"no base to compare with ({ref} not found; pass --infx-base REF to pytest,"
            " --base REF to infx lint)"
        )
    if ctx.head_changelog() is None and not ctx.base_changelog:
        return _no_changelog(ctx)
    return None


def _invalid_new_entry(ctx: LintContext) -> bool:
    """Whether a new entry failed the schema, so which keys it covers is unknown."""
    entries = parsed_head(ctx).entries
    return any(i < len(entries) and entries[i] is None for i in changelog_diff(ctx).new_entries)


def _needs_recipe_keys(ctx: LintContext) -> str | None:
    if ctx.keys() is None:
        if ctx.tree() is not None:
            return "recipe keys unknown (some recipe files do not load; see recipes-load)"
        return "recipe keys unknown (the recipe loader was not run)"
    return _no_changelog(ctx)


def _needs_changed_keys(ctx: LintContext) -> str | None:
    no_base = _no_base(ctx)
    if no_base is None and _invalid_new_entry(ctx):
        return "a new entry does not match the schema (see changelog-schema)"
    if no_base is None and ctx.changed() is None:
        return "changed recipe keys unknown (the recipe diff against the base was not computed)"
    return no_base


@rule(
    "changelog-schema",
    "Every changelog entry matches the strict schema (kebab-case fields, no duplicates).",
    skip_reason=_no_changelog,
)
def check_schema(ctx: LintContext) -> list[Finding]:
    found = parsed_head(ctx).findings
    entries = changed_entries(ctx)
    if entries is None:
        return list(found)
    return [f for f in found if f.entry is None or f.entry in entries]


@rule(
    "changelog-bytes",
    "The changelog's bytes: LF only, no tabs or NULs, one blank line between entries, one final"
    " newline.",
    skip_reason=_unless_conflicted(_no_changelog),
)
def _compute_check_bytes(ctx: LintContext) -> list[Finding]:
    def compute() -> list[Finding]:
        return byte_findings(
            ctx.head_changelog() or b"",
            parsed_head(ctx),
            path=ctx.changelog_rel,
            scope=changed_lines(ctx),
            base_crlf=(ctx.base_changelog or b"").count(b"\r\n"),
        )

    return ctx.stored(
        "changelog.bytes",
        lambda: digest(
            ctx.changelog_rel, ctx.head_changelog(), ctx.base_changelog if ctx.pr_mode else None
        ),
        compute,
    )


def check_bytes(ctx: LintContext) -> list[Finding]:
    return ctx.facts(_ChangelogFacts).check_bytes


@rule(
    "changelog-append-only",
    "The changelog starts with the base's bytes; only old pr-links may be corrected.",
    skip_reason=_unless_conflicted(_no_base),
)
def check_append_only(ctx: LintContext) -> list[Finding]:
    if ctx.head_changelog() is None:
        return [
            Finding(
                "changelog-append-only",
                ctx.changelog_rel,
                None,
                None,
                f"the changelog was deleted (it exists at {ctx.base_ref}).",
                "Restore it; it is append-only.",
            )
        ]
    found = list(changelog_diff(ctx).findings)
    added = new_entries(ctx)
    flagged = [entry for entry in added if entry.append_only]
    if flagged and len(added) > 1:
        found.append(
            Finding(
                "changelog-append-only",
                ctx.changelog_rel,
                flagged[0].line,
                flagged[0].index,
                f"an 'append-only: true' entry is added together with {len(added) - 1} other new"
                " entries.",
                "An append-only entry must be the only new entry of its change.",
            )
        )
    return found


@rule(
    "changelog-pr-link",
    "New entries link to their PR: 'XXX', '.../pull/XXX' or '.../pull/<N>' (on main: the PR"
    " URL only; with a known PR number: that PR's URL or a placeholder).",
    skip_reason=_unless_conflicted(_no_base),
)
def check_pr_links(ctx: LintContext) -> list[Finding]:
    repo = changelog_diff(ctx).pr_repo
    placeholder_url = f"https://github.com/{repo}/pull/{PLACEHOLDER}"
    canonical = canonical_pr_url(repo)
    number = ctx.pull.number
    own = f"https://github.com/{repo}/pull/{number}"
    found: list[Finding] = []
    for entry in new_entries(ctx):
        link = entry.pr_link
        if ctx.pull.main:
            if canonical.fullmatch(link):
                continue
            message = (
                f"on the main branch a new entry's pr-link must be its PR URL; found {link!r}."
            )
            hint = f"Replace it with https://github.com/{repo}/pull/<N>."
        elif number is not None:
            if link in (PLACEHOLDER, placeholder_url, own):
                continue
            message = f"pr-link {link!r} is not this pull request (#{number})."
            hint = f"Use '{own}' or '{PLACEHOLDER}'."
        else:
            if link in (PLACEHOLDER, placeholder_url) or canonical.fullmatch(link):
                continue
            message = f"pr-link {link!r} is not accepted for a new entry."
            hint = f"Use '{PLACEHOLDER}', '{placeholder_url}' or the PR URL."
        found.append(
            Finding(
                "changelog-pr-link",
                ctx.changelog_rel,
                entry.pr_link_line,
                entry.index,
                message,
                hint,
            )
        )
    return found


@functools.lru_cache(maxsize=4096)
def _matcher(pattern: str, keys: frozenset[str]) -> frozenset[str]:
    """The keys ``pattern`` names; asked once per pattern and key set, so a long changelog
    that repeats a wildcard costs one match."""
    if _WILDCARD.search(pattern) is None:
        return frozenset({pattern}) if pattern in keys else frozenset()
    return frozenset(fnmatch.filter(keys, pattern))


@rule(
    "changelog-config-keys",
    "Every config key (fnmatch wildcards allowed) names a recipe key or a master-config key.",
    skip_reason=_unless_conflicted(_needs_recipe_keys),
)
def check_config_keys(ctx: LintContext) -> list[Finding]:
    keys = ctx.keys() or frozenset()
    found: list[Finding] = []
    resolved: dict[str, bool] = {}
    entries = changed_entries(ctx)
    noun = "recipe key" if ctx.master_keys() is None else "config key"
    for entry in parsed_head(ctx).valid():
        if entries is not None and entry.index not in entries:
            continue
        for pattern, line in zip(entry.config_keys, entry.key_lines, strict=True):
            if pattern not in resolved:
                resolved[pattern] = bool(_matcher(pattern, keys))
            if resolved[pattern]:
                continue
            close = difflib.get_close_matches(pattern, sorted(keys), n=1)
            hint = f"Did you mean '{close[0]}'?" if close else "Check the recipe keys."
            found.append(
                Finding(
                    "changelog-config-keys",
                    ctx.changelog_rel,
                    line,
                    entry.index,
                    f"config key {pattern!r} matches no {noun}.",
                    hint,
                )
            )
    return found


def _changelog_only_allowed(ctx: LintContext, entry: ChangelogEntry) -> bool:
    """Whether the repository lets this new entry stand without a changed config key."""
    policy = ctx.changelog_only
    if policy.mode == "match" and policy.pattern is not None:
        return any(re.search(policy.pattern, line) for line in entry.description)
    if policy.mode == "repeat":
        return any(
            earlier.index < entry.index
            and earlier.config_keys == entry.config_keys
            and earlier.description == entry.description
            for earlier in parsed_head(ctx).valid()
        )
    return False


def _changed_indirectly(ctx: LintContext) -> bool:
    """Whether points may have changed through files other than their config: with master
    configs, a collector script or a recipe file a config names (InferenceX's
    ``CONFIG_FILE=...``) changes the points of keys whose block is unchanged, so an entry
    listing such a key is not superfluous; a changed block must still be covered."""
    if ctx.master_keys() is None:
        return False
    changes = ctx.change_set()
    if changes is None:
        return True
    own = {ctx.changelog_rel, *(ctx.relpath(p) for p in master_files(ctx.root, ctx.master_configs))}
    return any(name not in own for name in changes.files)


@rule(
    "changelog-coverage",
    "Each changed recipe key is covered by exactly one new entry; no entry without a change.",
    skip_reason=_unless_conflicted(_needs_changed_keys),
)
def check_coverage(ctx: LintContext) -> list[Finding]:
    changed = ctx.changed() or frozenset()
    known = ctx.keys()
    if known is not None:
        # A removed recipe cannot be listed (config keys must resolve), so it needs no entry.
        changed = changed & known
    base = ctx.base_ref or "the base"
    path = ctx.changelog_rel
    added = new_entries(ctx)
    found: list[Finding] = []
    indirect = _changed_indirectly(ctx)
    policy = ctx.changelog_only
    allowed = {entry.index for entry in added if _changelog_only_allowed(ctx, entry)}
    remove = "Remove the entry: a change that moves no benchmark point adds none."
    if policy.mode != "forbid":
        remove = f"Remove the entry, or make it one that may change no key: {policy.describe()}."
    if not changed:
        for entry in added:
            if not entry.evals_only and not indirect and entry.index not in allowed:
                found.append(
                    Finding(
                        "changelog-coverage",
                        path,
                        entry.line,
                        entry.index,
                        f"new entry, but no recipe key changed since {base}.",
                        remove,
                    )
                )
        return found
    covering: dict[str, dict[int, ChangelogEntry]] = {key: {} for key in changed}
    for entry in added:
        for pattern, line in zip(entry.config_keys, entry.key_lines, strict=True):
            hits = _matcher(pattern, changed)
            for hit in hits:
                covering[hit].setdefault(entry.index, entry)
            unknown = known is not None and not _matcher(pattern, known)
            if hits or entry.evals_only or unknown or indirect or entry.index in allowed:
                continue
            found.append(
                Finding(
                    "changelog-coverage",
                    path,
                    line,
                    entry.index,
                    f"new entry lists {pattern!r}, but no point of it changed since {base}.",
                    "List only the keys 'infx changed' reports (evals-only entries excepted).",
                )
            )
    end = (ctx.head_changelog() or b"").count(b"\n") or None
    for key in sorted(changed):
        entries = list(covering[key].values())
        if not entries:
            found.append(
                Finding(
                    "changelog-coverage",
                    path,
                    end,
                    None,
                    f"recipe key {key!r} changed since {base} but no new entry covers it.",
                    "Append one entry at the end whose config-keys list every changed key.",
                )
            )
        elif len(entries) > 1:
            found.append(
                Finding(
                    "changelog-coverage",
                    path,
                    entries[1].line,
                    entries[1].index,
                    f"recipe key {key!r} is covered by new entries"
                    f" {', '.join(str(e.index + 1) for e in entries)}.",
                    "List each changed key in exactly one new entry.",
                )
            )
    return found


class _ChangelogFacts(Facts):
    """The parsed changelog, its diff against the base and its byte findings, shared by the
    changelog rules."""

    @cached_property
    def parsed_head(self) -> ParsedChangelog:
        return _compute_parsed_head(self.ctx)

    @cached_property
    def changelog_diff(self) -> ChangelogDiff:
        return _compute_changelog_diff(self.ctx)

    @cached_property
    def check_bytes(self) -> list[Finding]:
        return _compute_check_bytes(self.ctx)
