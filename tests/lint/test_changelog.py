from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_infx.lint.builtin import get_rule
from pytest_infx.lint.changelog import (
    ChangelogFormatError,
    load_changelog,
    parse_changelog,
    split_entries,
)
from pytest_infx.lint.context import LintContext
from pytest_infx.lint.findings import Finding

from .conftest import MakeRepo
from .helpers import ENTRY_A, ENTRY_B, entry, join

LocalContext = Callable[..., LintContext]


def run(rule_id: str, ctx: LintContext) -> list[Finding]:
    return get_rule(rule_id).run(ctx)


def rendered(rule_id: str, ctx: LintContext) -> list[str]:
    return [finding.render() for finding in run(rule_id, ctx)]


# --- schema ----------------------------------------------------------------------------------


def test_valid_changelog_parses_with_lines() -> None:
    entries = load_changelog(join(ENTRY_A, ENTRY_B).encode())
    assert [e.index for e in entries] == [0, 1]
    assert entries[1].line == 9
    assert entries[1].config_keys == ("qwen3.5-fp4-b300-sglang", "glm5.2-fp8-*")
    assert entries[1].key_lines == (10, 11)
    assert entries[1].description == ("Bump the image", "Raise chunked prefill to 16384")
    assert entries[0].scenario_type == ("agentic-coding",)
    assert entries[1].pr_link_line == 15


def test_optional_fields_are_typed() -> None:
    text = entry("a", extra="  evals-only: true\n  eval-min-prefill-ep: 2\n")
    (parsed,) = load_changelog(text.encode())
    assert parsed.evals_only is True
    assert parsed.eval_min_prefill_ep == 2


@pytest.mark.parametrize(
    ("extra", "message", "line"),
    [
        ("  config_keys:\n    - a\n", "unknown field 'config_keys'", 5),
        ("  append-only: true\n  evals-only: true\n", "cannot be combined with evals-only", 5),
        ("  eval-min-prefill-ep: 0\n", "'eval-min-prefill-ep' must be an integer >= 1", 5),
        ("  all-evals: maybe\n", "'all-evals' must be true or false", 5),
        ("  scenario-type: agentic\n", "'scenario-type' must be a list", 5),
    ],
)
def test_schema_errors_name_entry_and_line(
    local_context: LocalContext, extra: str, message: str, line: int
) -> None:
    ctx = local_context(join(ENTRY_A, entry("a", extra=extra)).encode())
    (finding,) = run("changelog-schema", ctx)
    assert message in finding.message
    assert (finding.entry, finding.line) == (1, 8 + line)


def test_snake_case_field_gets_a_suggestion(local_context: LocalContext) -> None:
    ctx = local_context(entry("a", extra="  pr_link: x\n"))
    texts = rendered("changelog-schema", ctx)
    assert any("Did you mean 'pr-link'?" in text for text in texts)


def test_missing_field_and_bad_types(local_context: LocalContext) -> None:
    ctx = local_context('- config-keys: []\n  description: "one string"\n  pr-link: 12\n')
    messages = [f.message for f in run("changelog-schema", ctx)]
    assert "'config-keys' must be a list of at least one item." in messages
    assert "'description' must be a list of at least one item." in messages
    assert "'pr-link' must be a string, found '12'." in messages
    missing = local_context('- config-keys:\n    - a\n  description:\n    - "x"\n')
    assert [f.message for f in run("changelog-schema", missing)] == [
        "missing required field 'pr-link'."
    ]


def test_duplicate_key_is_refused_with_both_lines(local_context: LocalContext) -> None:
    ctx = local_context(entry("a") + '  description:\n    - "again"\n')
    (finding,) = run("changelog-schema", ctx)
    assert finding.message == "duplicate key 'description' (first on line 3)."
    assert finding.line == 6


def test_yaml_syntax_error_has_a_line(local_context: LocalContext) -> None:
    ctx = local_context('- config-keys:\n    - a\n  description: ["x"\n  pr-link: XXX\n')
    (finding,) = run("changelog-schema", ctx)
    assert finding.message.startswith("not valid YAML")
    assert finding.line is not None


def test_top_level_must_be_a_list(local_context: LocalContext) -> None:
    (finding,) = run("changelog-schema", local_context("config-keys: [a]\n"))
    assert finding.message == "the changelog must be a YAML list of entries."


def test_load_changelog_raises_with_rendered_findings() -> None:
    with pytest.raises(ChangelogFormatError, match=r"perf-changelog.yaml:1 \(entry 1\)"):
        load_changelog(b'- config-keys:\n    - a\n  description:\n    - "x"\n')


def test_empty_changelog_is_valid(local_context: LocalContext) -> None:
    ctx = local_context("")
    assert run("changelog-schema", ctx) == []
    assert run("changelog-bytes", ctx) == []
    assert parse_changelog(b"").entries == ()


# --- bytes -----------------------------------------------------------------------------------


def test_clean_file_passes_byte_rules(local_context: LocalContext) -> None:
    assert run("changelog-bytes", local_context(join(ENTRY_A, ENTRY_B))) == []


def test_tab_carriage_return_and_nul_have_line_and_column(local_context: LocalContext) -> None:
    text = join(ENTRY_A, ENTRY_B).replace('"Bump the image"', '"Bump\tthe image"')
    text = text.replace("pull/2707\n", "pull/2707\r\r\n").replace("Raise", "Ra\0ise")
    messages = {(f.line, f.message) for f in run("changelog-bytes", local_context(text))}
    assert (13, "a tab at column 12.") in messages
    assert (7, "a carriage return at column 66.") in messages
    assert (14, "a NUL byte at column 10.") in messages


def test_final_newline_exactly_one(local_context: LocalContext) -> None:
    missing = run("changelog-bytes", local_context(ENTRY_A.rstrip("\n")))
    assert [f.message for f in missing] == ["the file does not end with a newline."]
    extra = run("changelog-bytes", local_context(ENTRY_A + "\n\n"))
    assert [f.message for f in extra] == [
        "the file ends with 2 blank lines after its final newline."
    ]


def test_one_blank_line_between_entries(local_context: LocalContext) -> None:
    two = run("changelog-bytes", local_context(ENTRY_A + "\n\n" + ENTRY_B))
    assert [(f.line, f.message) for f in two] == [(8, "2 blank lines between entries.")]
    none = run("changelog-bytes", local_context(ENTRY_A + ENTRY_B))
    assert [(f.line, f.entry, f.message) for f in none] == [
        (8, 1, "entry is not separated from the previous entry by a blank line.")
    ]


def test_blank_and_whitespace_lines_inside_entries(local_context: LocalContext) -> None:
    text = ENTRY_A.replace("  description:", "\n  description:") + "\n" + ENTRY_B
    found = run("changelog-bytes", local_context(text))
    assert [(f.line, f.entry, f.message) for f in found] == [
        (5, 0, "a blank line inside an entry.")
    ]
    spaces = run("changelog-bytes", local_context(ENTRY_A + "  \n" + ENTRY_B))
    assert [(f.line, f.message) for f in spaces] == [(8, "line holds only whitespace.")]


def test_config_keys_line_count_must_match_entries(local_context: LocalContext) -> None:
    reordered = '- description:\n    - "x"\n  config-keys:\n    - a\n  pr-link: XXX\n'
    found = run("changelog-bytes", local_context(join(ENTRY_A, reordered)))
    messages = [(f.line, f.entry, f.message) for f in found]
    assert messages == [(9, 1, "entry does not start with a '- config-keys:' line at column 0.")]


def test_split_entries_on_config_keys_lines() -> None:
    preamble, chunks = split_entries(join(ENTRY_A, ENTRY_B).encode())
    assert preamble == b""
    assert chunks == [(ENTRY_A + "\n").encode(), ENTRY_B.encode()]


# --- append-only -----------------------------------------------------------------------------


def test_appending_an_entry_passes(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, ENTRY_B))
    assert run("changelog-append-only", ctx) == []


def test_first_changelog_against_a_base_without_one(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(None, ENTRY_A)
    assert ctx.base_changelog == b""
    assert run("changelog-append-only", ctx) == []


def test_modified_old_entry_fails_quoting_both_lines(changelog_repo: MakeRepo) -> None:
    head = join(ENTRY_A.replace("cudagraphs", "graphs"), ENTRY_B)
    ctx = changelog_repo(join(ENTRY_A, ENTRY_B), head)
    (finding,) = run("changelog-append-only", ctx)
    assert (finding.line, finding.entry) == (6, 0)
    assert finding.message == "old entry modified; only its pr-link may be corrected."
    assert finding.excerpt == (
        'base:     - "Serve the TP8 arm with FULL_AND_PIECEWISE cudagraphs"',
        'head:     - "Serve the TP8 arm with FULL_AND_PIECEWISE graphs"',
    )


def test_lines_added_to_the_last_old_entry_fail(changelog_repo: MakeRepo) -> None:
    head = ENTRY_A.replace("  description:", '  description:\n    - "more"')
    (finding,) = run("changelog-append-only", changelog_repo(ENTRY_A, head))
    assert finding.message == "old entry modified; only its pr-link may be corrected."


def test_entry_inserted_in_the_middle_fails(changelog_repo: MakeRepo) -> None:
    new = entry("qwen3.5-fp4-b300-sglang")
    ctx = changelog_repo(join(ENTRY_A, ENTRY_B), join(ENTRY_A, new, ENTRY_B))
    (finding,) = run("changelog-append-only", ctx)
    assert (finding.line, finding.entry) == (9, 1)
    assert finding.message == "new entry inserted before old entry 2."


def test_deleted_entry_fails(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(join(ENTRY_A, ENTRY_B), ENTRY_B)
    (finding,) = run("changelog-append-only", ctx)
    assert finding.message == "1 old entry deleted (base entries 1..1)."


def test_deleted_changelog_fails(changelog_repo: MakeRepo) -> None:
    (finding,) = run("changelog-append-only", changelog_repo(ENTRY_A, None))
    assert "the changelog was deleted" in finding.message


def test_changed_separator_fails(changelog_repo: MakeRepo) -> None:
    base = join(ENTRY_A, ENTRY_B, entry("a"))
    head = ENTRY_A + "\n\n" + ENTRY_B + "\n" + entry("a")
    messages = [f.message for f in run("changelog-append-only", changelog_repo(base, head))]
    assert messages == ["the blank lines between old entries changed."]


def test_pr_link_correction_alone_passes(changelog_repo: MakeRepo) -> None:
    old = entry("a", pr_link="XXX")
    fixed = entry("a", pr_link="https://github.com/SemiAnalysisAI/InferenceX/pull/2711")
    ctx = changelog_repo(join(ENTRY_A, old), join(ENTRY_A, fixed))
    assert run("changelog-append-only", ctx) == []


def test_pr_link_correction_mixed_with_a_new_entry_fails(changelog_repo: MakeRepo) -> None:
    old = entry("a", pr_link="TBD")
    fixed = entry("a", pr_link="https://github.com/SemiAnalysisAI/InferenceX/pull/2711")
    ctx = changelog_repo(join(ENTRY_A, old), join(ENTRY_A, fixed, entry("b")))
    (finding,) = run("changelog-append-only", ctx)
    assert finding.message == "pr-link corrections of old entries (2) are mixed with 1 new entry."
    assert finding.entry == 2


def test_pr_link_correction_must_be_canonical(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(join(ENTRY_A, entry("a")), join(ENTRY_A, entry("a", pr_link="TBD")))
    (finding,) = run("changelog-append-only", ctx)
    assert finding.message == (
        "old entry's pr-link corrected to 'TBD', which is not a canonical PR URL."
    )
    assert finding.hint == "Use https://github.com/SemiAnalysisAI/InferenceX/pull/<N>."
    assert finding.line == 13


def test_canonical_pr_link_is_history(changelog_repo: MakeRepo) -> None:
    head = ENTRY_A.replace("pull/2707", "pull/2708")
    (finding,) = run("changelog-append-only", changelog_repo(ENTRY_A, head))
    assert "pr-link of an old entry changed" in finding.message


def test_append_only_entry_must_be_the_only_new_one(changelog_repo: MakeRepo) -> None:
    flagged = entry("a", extra="  append-only: true\n")
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, flagged, entry("b")))
    (finding,) = run("changelog-append-only", ctx)
    assert "'append-only: true' entry is added together with 1 other new" in finding.message


def test_base_relative_rules_skip_without_a_base(local_context: LocalContext) -> None:
    ctx = local_context(ENTRY_A)
    for rule_id in ("changelog-append-only", "changelog-pr-link", "changelog-coverage"):
        reason = get_rule(rule_id).skip_reason(ctx)
        assert reason is not None
        assert get_rule(rule_id).run(ctx) == []
    assert "no base to compare with" in str(get_rule("changelog-pr-link").skip_reason(ctx))


# --- pr-link ---------------------------------------------------------------------------------


def test_tbd_pr_link_fails_for_a_new_entry(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, entry("a", pr_link="TBD")))
    assert rendered("changelog-pr-link", ctx) == [
        "perf-changelog.yaml:13 (entry 2): pr-link 'TBD' is not accepted for a new entry."
        " Use 'XXX', 'https://github.com/SemiAnalysisAI/InferenceX/pull/XXX' or the PR URL."
    ]


@pytest.mark.parametrize(
    "link",
    [
        "XXX",
        "https://github.com/SemiAnalysisAI/InferenceX/pull/XXX",
        "https://github.com/SemiAnalysisAI/InferenceX/pull/4330",
    ],
)
def test_accepted_new_pr_links(changelog_repo: MakeRepo, link: str) -> None:
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, entry("a", pr_link=link)))
    assert run("changelog-pr-link", ctx) == []


@pytest.mark.parametrize(
    "link",
    [
        "https://github.com/other/repo/pull/12",
        "https://github.com/SemiAnalysisAI/InferenceX/pull/12/changes",
        "'XXX '",
    ],
)
def test_other_new_pr_links_fail(changelog_repo: MakeRepo, link: str) -> None:
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, entry("a", pr_link=link)))
    assert len(run("changelog-pr-link", ctx)) == 1


def test_old_entries_pr_links_are_not_checked(changelog_repo: MakeRepo) -> None:
    base = join(ENTRY_A, entry("a", pr_link="TBD"))
    assert run("changelog-pr-link", changelog_repo(base, base)) == []


def test_pr_repo_is_inferred_from_the_base_links(changelog_repo: MakeRepo) -> None:
    base = entry("a", pr_link="https://github.com/acme/bench/pull/3")
    ok = changelog_repo(
        base, join(base, entry("b", pr_link="https://github.com/acme/bench/pull/9"))
    )
    assert run("changelog-pr-link", ok) == []


def test_pr_repo_can_be_configured(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(
        ENTRY_A,
        join(ENTRY_A, entry("a", pr_link="https://github.com/SemiAnalysisAI/InferenceX/pull/9")),
        pr_repo="acme/bench",
    )
    (finding,) = run("changelog-pr-link", ctx)
    assert "https://github.com/acme/bench/pull/XXX" in finding.hint


# --- config keys -----------------------------------------------------------------------------


def test_config_keys_resolve_literally_and_by_wildcard(local_context: LocalContext) -> None:
    from .helpers import RECIPE_KEYS

    ctx = local_context(join(ENTRY_A, ENTRY_B), recipe_keys=RECIPE_KEYS)
    assert run("changelog-config-keys", ctx) == []


def test_unknown_config_key_fails_with_a_suggestion(local_context: LocalContext) -> None:
    from .helpers import RECIPE_KEYS

    ctx = local_context(
        join(ENTRY_A, entry("qwen3.5-fp4-b300-sglng", "kimi-*")), recipe_keys=RECIPE_KEYS
    )
    assert rendered("changelog-config-keys", ctx) == [
        "perf-changelog.yaml:10 (entry 2): config key 'qwen3.5-fp4-b300-sglng' matches no recipe"
        " key. Did you mean 'qwen3.5-fp4-b300-sglang'?",
        "perf-changelog.yaml:11 (entry 2): config key 'kimi-*' matches no recipe key."
        " Check the recipe keys.",
    ]


def test_config_keys_skip_when_recipe_keys_unknown(local_context: LocalContext) -> None:
    ctx = local_context(entry("anything"))
    assert get_rule("changelog-config-keys").skip_reason(ctx) is not None
    assert run("changelog-config-keys", ctx) == []


# --- coverage --------------------------------------------------------------------------------


def test_changed_keys_covered_by_one_new_entry_pass(changelog_repo: MakeRepo) -> None:
    new = entry("glm5.2-fp8-*", "qwen3.5-fp4-b300-sglang")
    ctx = changelog_repo(
        ENTRY_A,
        join(ENTRY_A, new),
        changed=["glm5.2-fp8-b300-vllm", "glm5.2-fp8-b200-vllm", "qwen3.5-fp4-b300-sglang"],
    )
    assert run("changelog-coverage", ctx) == []


def test_changed_key_without_entry_fails(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(ENTRY_A, ENTRY_A, changed=["qwen3.5-fp4-b300-sglang"])
    (finding,) = run("changelog-coverage", ctx)
    assert finding.message == (
        "recipe key 'qwen3.5-fp4-b300-sglang' changed since origin/main but no new entry covers it."
    )


def test_changed_key_in_two_new_entries_fails(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(
        ENTRY_A,
        join(ENTRY_A, entry("glm5.2-fp8-b300-vllm"), entry("glm5.2-fp8-*")),
        changed=["glm5.2-fp8-b300-vllm"],
    )
    (finding,) = run("changelog-coverage", ctx)
    assert finding.message == "recipe key 'glm5.2-fp8-b300-vllm' is covered by new entries 2, 3."
    assert finding.entry == 2


def test_new_entry_listing_an_unchanged_key_fails(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(
        ENTRY_A,
        join(ENTRY_A, entry("glm5.2-fp8-b300-vllm", "qwen3.5-fp4-b300-sglang")),
        changed=["glm5.2-fp8-b300-vllm"],
    )
    (finding,) = run("changelog-coverage", ctx)
    assert finding.message == (
        "new entry lists 'qwen3.5-fp4-b300-sglang', but no point of it changed since origin/main."
    )
    assert finding.line == 11


def test_no_change_means_no_new_entry(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, entry("glm5.2-fp8-b300-vllm")), changed=[])
    (finding,) = run("changelog-coverage", ctx)
    assert finding.message == "new entry, but no recipe key changed since origin/main."
    assert changelog_repo is not None


def test_evals_only_entry_needs_no_changed_key(changelog_repo: MakeRepo) -> None:
    evals = entry("glm5.2-fp8-b300-vllm", extra="  evals-only: true\n")
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, evals), changed=[])
    assert run("changelog-coverage", ctx) == []


def test_removed_recipe_needs_no_entry(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(ENTRY_A, ENTRY_A, changed=["retired-fp8-h100-vllm"])
    assert run("changelog-coverage", ctx) == []


def test_coverage_skips_when_changed_keys_unknown(changelog_repo: MakeRepo) -> None:
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, entry("a")))
    assert "changed recipe keys unknown" in str(get_rule("changelog-coverage").skip_reason(ctx))


# --- the project's own changelog --------------------------------------------------------------


def test_project_changelog_passes_the_file_rules(local_context: LocalContext) -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "perf-changelog.yaml").read_bytes()
    ctx = local_context(text)
    assert run("changelog-schema", ctx) == []
    assert run("changelog-bytes", ctx) == []
    keys = {key for e in load_changelog(text) for key in e.config_keys}
    assert "smollm2-bf16-cpu-vllm-ngram" in keys


def test_a_whitespace_line_at_the_end_is_one_finding(local_context: LocalContext) -> None:
    found = run("changelog-bytes", local_context(ENTRY_A + "  \n"))
    assert [f.message for f in found] == [
        "the file ends with a blank line (holding only whitespace) after its final newline."
    ]


def test_a_crlf_file_is_one_finding(local_context: LocalContext) -> None:
    text = join(ENTRY_A, ENTRY_B).replace("\n", "\r\n")
    found = run("changelog-bytes", local_context(text))
    assert [(f.line, f.message) for f in found] == [
        (1, "uses CRLF line endings (15 lines); convert to LF.")
    ]


# --- PR mode: only what the change wrote, one finding per defect -------------------------------


def every_finding(ctx: LintContext) -> list[tuple[str, int | None, str]]:
    from pytest_infx.lint.builtin import all_rules

    changelog = [r for r in all_rules() if r.id.startswith("changelog-")]
    return [(f.rule, f.line, f.message) for r in changelog for f in r.run(ctx)]


def test_a_blank_line_run_the_change_completes_is_its_finding(changelog_repo: MakeRepo) -> None:
    base = ENTRY_A + "\n"
    ctx = changelog_repo(base, base + "\n" + ENTRY_B)
    assert every_finding(ctx) == [("changelog-bytes", 9, "2 blank lines between entries.")]


def test_a_whitespace_separator_of_the_base_is_not_the_changes_finding(
    changelog_repo: MakeRepo,
) -> None:
    base = ENTRY_A + "  \n"
    ctx = changelog_repo(base, base + ENTRY_B)
    assert every_finding(ctx) == []
    from pytest_infx.lint.context import build_context

    audit = build_context(ctx.root, base_ref="origin/main", audit=True, comment_files=())
    assert ("changelog-bytes", 8, "line holds only whitespace.") in every_finding(audit)


def test_correcting_a_link_below_a_whitespace_separator_passes(changelog_repo: MakeRepo) -> None:
    old = entry("qwen3.5-fp4-b300-sglang", pr_link="XXX")
    fixed = entry(
        "qwen3.5-fp4-b300-sglang", pr_link="https://github.com/SemiAnalysisAI/InferenceX/pull/2711"
    )
    ctx = changelog_repo(ENTRY_A + "  \n" + old, ENTRY_A + "  \n" + fixed)
    assert every_finding(ctx) == []


def test_an_entry_without_config_keys_is_one_finding(changelog_repo: MakeRepo) -> None:
    keyless = '- description:\n    - "x"\n  pr-link: XXX\n'
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, keyless))
    assert every_finding(ctx) == [("changelog-schema", 9, "missing required field 'config-keys'.")]


def test_an_entry_with_config_keys_second_is_not_an_old_entry_modified(
    changelog_repo: MakeRepo,
) -> None:
    reordered = (
        '- description:\n    - "x"\n  config-keys:\n    - qwen3.5-fp4-b300-sglang\n  pr-link: XXX\n'
    )
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, reordered))
    assert [rule for rule, _, _ in every_finding(ctx)] == ["changelog-bytes"]


def test_a_crlf_entry_on_a_crlf_base_is_one_finding(changelog_repo: MakeRepo) -> None:
    base = ENTRY_A.replace("\n", "\r\n")
    head = join(ENTRY_A, ENTRY_B).replace("\n", "\r\n")
    assert every_finding(changelog_repo(base, head)) == [
        ("changelog-bytes", 1, "uses CRLF line endings (15 lines); convert to LF.")
    ]


def test_git_conflict_markers_are_named_at_their_line(changelog_repo: MakeRepo) -> None:
    ours = entry("qwen3.5-fp4-b300-sglang")
    theirs = entry("glm5.2-fp8-b200-vllm")
    head = f"{ENTRY_A}\n<<<<<<< HEAD\n{ours}=======\n{theirs}>>>>>>> origin/main\n"
    ctx = changelog_repo(ENTRY_A, head)
    (finding,) = run("changelog-schema", ctx)
    assert every_finding(ctx) == [
        (
            "changelog-schema",
            9,
            "unresolved Git conflict: 3 conflict marker lines (<<<<<<<, =======, >>>>>>>).",
        )
    ]
    assert finding.excerpt == (
        " 9 | <<<<<<< HEAD",
        "15 | =======",
        "21 | >>>>>>> origin/main",
    )
