from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.lint.builtin import get_rule
from pytest_infx.lint.comments import (
    BLANK,
    CODE,
    COMMENT,
    DIRECTIVE,
    SourceLine,
    broad_findings,
    describe_findings,
    header_findings,
    scan_shell,
    scan_yaml,
)
from pytest_infx.lint.context import build_context

COLLECTOR_HEADER = [
    "# MiMo-V2.6-Flash SPEED-Bench acceptance-length collector (B300, vLLM, SGLang MTP).",
    "#",
    "# This script serves XiaomiMiMo/MiMo-V2.6-Flash-RL with SGLang and MTP speculative",
    "# decoding, then runs SPEED-Bench coding prompts for every draft length and thinking",
    "# mode, scraping the accepted/draft token counters before and after each cell.",
    "#",
    "# Topology: TP4 on one B300 node, concurrency 32, output length 4096.",
    "# Sampling follows the model card: temperature 1.0, top-p 0.95.",
    "#",
    "# Inputs (environment):",
    "#   MODEL         checkpoint path or hub id",
    "#   PORT          server port (default 8888)",
    "#   MTP_LIST      draft lengths to sweep",
    "#   THINKING_MODES  off/on",
    "#",
    "# Output: speedbench-reference-al.yaml in the golden format.",
    "# Run through speedbench-al.yml.",
]

COLLECTOR_BODY = """\
set -euo pipefail
PORT=${PORT:-8888}
MODEL_DIR="/models/#mimo"
echo "counting ${#MTP_LIST} lengths" # trailing comments are fine
cat > cells.txt <<'EOF'
# not a comment: heredoc body
EOF
for k in $MTP_LIST; do
    # SGLang counts the bonus token, so draft tokens are k + 1.
    python3 -m sglang.launch_server --speculative-num-draft-tokens $((k + 1)) &
done
"""

RECIPE_WITH_OVERRIDE_COMMENT = """\
key: mimov2.6flash-fp4-b200-sglang-agentic
runner: b200
engine:
  name: sglang
  args:
    # 0.85 leaves room for the CUDA graphs at concurrency 64.
    mem-fraction-static: 0.85
overrides:
  # TP4 at concurrency 1 needs a smaller prefill chunk:
  # the first turn of the replay is 120k tokens and the
  # default chunk overflows the KV cache.
  override_tp4_c1:
    when: {tp: 4, concurrency: 1}
    engine:
      args:
        chunked-prefill-size: 8192
"""


def kinds(lines: list[SourceLine]) -> list[str]:
    return [line.kind for line in lines]


def test_collector_with_17_line_header_fails() -> None:
    text = "#!/usr/bin/env bash\n" + "\n".join(COLLECTOR_HEADER) + "\n" + COLLECTOR_BODY
    lines = scan_shell(text)
    (finding,) = header_findings("collect.sh", lines)
    assert finding.rule == "comments-header"
    assert finding.line == 2
    assert finding.message == "header comment (lines 2-18) before the first line of code."
    assert finding.excerpt[0] == f" 2 | {COLLECTOR_HEADER[0]}"
    assert len(finding.excerpt) == 17
    assert broad_findings("collect.sh", lines) == []


def test_header_comment_describing_topology_is_also_flagged() -> None:
    text = "#!/bin/bash\n" + "\n".join(COLLECTOR_HEADER) + "\n" + COLLECTOR_BODY
    found = describe_findings("collect.sh", scan_shell(text))
    assert [(f.line, f.message) for f in found] == [
        (4, "comment describes the file, topology or config ('This script')."),
        (8, "comment describes the file, topology or config ('Topology:')."),
    ]


def test_collector_body_has_only_allowed_comments() -> None:
    lines = scan_shell("#!/usr/bin/env bash\n# shellcheck disable=SC2086\n" + COLLECTOR_BODY)
    assert header_findings("c.sh", lines) == []
    assert broad_findings("c.sh", lines) == []
    assert describe_findings("c.sh", lines) == []


def test_shell_line_classification() -> None:
    lines = scan_shell("#!/usr/bin/env bash\n# shellcheck shell=bash\n" + COLLECTOR_BODY)
    assert kinds(lines[:2]) == [DIRECTIVE, DIRECTIVE]
    by_text = {line.text: line for line in lines}
    assert by_text['MODEL_DIR="/models/#mimo"'].comment is None
    assert by_text["# not a comment: heredoc body"].kind == CODE
    trailing = by_text['echo "counting ${#MTP_LIST} lengths" # trailing comments are fine']
    assert (trailing.kind, trailing.comment) == (CODE, "# trailing comments are fine")
    assert (
        by_text["    # SGLang counts the bonus token, so draft tokens are k + 1."].kind == COMMENT
    )


@pytest.mark.parametrize(
    "code",
    [
        "echo 'it''s # quoted'",
        'echo "a \\" # still quoted"',
        "echo $'tab\\t# quoted'",
        "x=${#array[@]}",
        "echo $#",
        "echo a#b",
        "[[ $line =~ ^#.* ]]",
    ],
)
def test_hash_inside_words_and_quotes_is_not_a_comment(code: str) -> None:
    (line,) = scan_shell(code + "\n")
    assert (line.kind, line.comment) == (CODE, None)


def test_multi_line_string_and_indented_heredoc() -> None:
    text = 'msg="first\n# inside the string\nlast"\ncat <<-END\n\t# body\n\tEND\n# real\necho\n'
    lines = scan_shell(text)
    assert kinds(lines) == [CODE, CODE, CODE, CODE, CODE, CODE, COMMENT, CODE]


def test_comment_block_in_a_script_fails() -> None:
    text = "set -e\n# first line\n# second line\necho hi\n"
    (finding,) = broad_findings("s.sh", scan_shell(text))
    assert finding.message == "comment block of 2 lines (lines 2-3)."
    assert finding.excerpt == ("2 | # first line", "3 | # second line")


def test_comment_followed_by_blank_line_fails() -> None:
    text = "set -e\n# explains nothing\n\necho hi\n# at the end\n"
    found = broad_findings("s.sh", scan_shell(text))
    assert [(f.line, f.message) for f in found] == [
        (2, "comment followed by a blank line (or the end of the file) explains no line."),
        (5, "comment followed by a blank line (or the end of the file) explains no line."),
    ]


def test_comment_above_a_function_fails() -> None:
    text = "set -e\n# Wait for the server.\nwait_ready() {\n  sleep 1\n}\n"
    (finding,) = broad_findings("s.sh", scan_shell(text))
    assert "opens a block" in finding.message
    assert finding.excerpt[-1] == "3 | wait_ready() {"


def test_three_line_comment_above_override_block_fails() -> None:
    lines = scan_yaml(RECIPE_WITH_OVERRIDE_COMMENT)
    (finding,) = broad_findings("recipes/r.yaml", lines)
    assert finding.rule == "comments-broad"
    assert (finding.line, finding.message) == (9, "comment block of 3 lines (lines 9-11).")
    assert finding.excerpt[0] == " 9 |   # TP4 at concurrency 1 needs a smaller prefill chunk:"


def test_one_line_comment_explaining_the_line_below_passes() -> None:
    lines = scan_yaml(RECIPE_WITH_OVERRIDE_COMMENT)
    by_number = {line.number: line for line in lines}
    assert by_number[6].kind == COMMENT
    assert all(f.line != 6 for f in broad_findings("recipes/r.yaml", lines))
    assert header_findings("recipes/r.yaml", lines) == []


def test_single_comment_above_a_yaml_section_fails() -> None:
    text = "key: a\n# The engine section.\nengine:\n  name: vllm\nruns: [1]\n"
    (finding,) = broad_findings("r.yaml", scan_yaml(text))
    assert finding.message == (
        "comment directly above 'engine:', which opens a block (a recipe, override, section or"
        " function)."
    )


def test_single_comment_above_a_list_valued_key_fails() -> None:
    text = "key: a\n# points\npoints:\n- tp: 4\n"
    assert len(broad_findings("r.yaml", scan_yaml(text))) == 1


def test_yaml_header_and_trailing_comments() -> None:
    text = "# Recipe for MiMo.\nkey: a # the key\ntp: 4\n"
    lines = scan_yaml(text)
    (finding,) = header_findings("r.yaml", lines)
    assert finding.message == "header comment (line 1) before the first line of code."
    assert lines[1].comment == "# the key"
    assert broad_findings("r.yaml", lines) == []


def test_yaml_quotes_and_block_scalars_are_not_comments() -> None:
    text = (
        "key: a\n"
        "image: 'repo#tag' # real\n"
        'url: "http://x/#frag"\n'
        "plain: a#b\n"
        "script: |\n"
        "  # part of the string\n"
        "\n"
        "  echo # also the string\n"
        "after: 1\n"
    )
    lines = scan_yaml(text)
    assert [line.comment for line in lines] == [None, "# real", *([None] * 7)]
    assert kinds(lines) == [CODE, CODE, CODE, CODE, CODE, CODE, BLANK, CODE, CODE]


def test_describe_catches_trailing_comments_in_yaml() -> None:
    text = "key: a\ntp: 4 # this config is for B200 only\n"
    (finding,) = describe_findings("r.yaml", scan_yaml(text))
    assert finding.line == 2
    assert "'this config'" in finding.message


def test_rules_run_over_the_context_files(tmp_path: Path) -> None:
    script = tmp_path / "scripts" / "collect.sh"
    recipe = tmp_path / "recipes" / "r.yaml"
    script.parent.mkdir()
    recipe.parent.mkdir()
    script.write_text("#!/usr/bin/env bash\n" + "\n".join(COLLECTOR_HEADER) + "\n" + COLLECTOR_BODY)
    recipe.write_text(RECIPE_WITH_OVERRIDE_COMMENT)
    ctx = build_context(tmp_path)
    assert {path.name for path in ctx.comment_files} == {"collect.sh", "r.yaml"}
    header = [f.render() for f in get_rule("comments-header").run(ctx)]
    broad = [f.render() for f in get_rule("comments-broad").run(ctx)]
    assert len(header) == 1
    assert header[0].startswith("scripts/collect.sh:2: header comment")
    assert len(broad) == 1
    assert broad[0].startswith("recipes/r.yaml:9: comment block of 3 lines")


def test_comment_rules_skip_without_files(tmp_path: Path) -> None:
    ctx = build_context(tmp_path, comment_files=())
    assert get_rule("comments-broad").skip_reason(ctx) is not None


def test_repository_scripts_and_recipes_follow_the_comment_rules() -> None:
    root = Path(__file__).resolve().parents[2]
    ctx = build_context(root)
    for rule_id in ("comments-header", "comments-broad", "comments-describe"):
        assert [f.render() for f in get_rule(rule_id).run(ctx)] == []


def test_comment_above_an_inline_when_override_fails_as_the_lint_page_says() -> None:
    text = (
        "overrides:\n"
        "  # TP4 at concurrency 1 needs a smaller prefill chunk\n"
        "  - when: {tp: 4, concurrency: 1}\n"
        "    engine:\n"
        "      args:\n"
        "        chunked-prefill-size: 8192\n"
        "args:\n"
        "  # the flag below is the tuned one\n"
        "  - --max-num-seqs\n"
        "  - '64'\n"
        "search-space:\n"
        "  # the low-latency arm\n"
        "  - { tp: 8, conc: 4 }\n"
    )
    found = broad_findings("r.yaml", scan_yaml(text))
    assert [(f.line, f.message) for f in found] == [
        (
            2,
            "comment directly above '- when: {tp: 4, concurrency: 1}', which opens a block (a"
            " recipe, override, section or function).",
        )
    ]
