"""The performance changelog (``perf-changelog.yaml``): entry schema (:mod:`.entries`), byte
rules (:mod:`.layout`), the append-only comparison with the base (:mod:`.history`) and the
rules that run them (:mod:`.rules`)."""

from pytest_infx.lint.changelog.entries import ChangelogEntry as ChangelogEntry
from pytest_infx.lint.changelog.entries import ChangelogFormatError as ChangelogFormatError
from pytest_infx.lint.changelog.entries import load_changelog as load_changelog
from pytest_infx.lint.changelog.entries import parse_changelog as parse_changelog
from pytest_infx.lint.changelog.layout import split_entries as split_entries
