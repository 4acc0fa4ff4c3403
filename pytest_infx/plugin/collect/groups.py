"""A recipe item's server group in its node id on an xdist worker, where ``--dist loadgroup``
(plain ``-n``, or the Slurm workers) expects it.

:func:`.selection.mark_server_groups` marks the items of one server with one ``xdist_group``;
xdist's worker writes the group into each id it sends (``...@group``) and the controller's
scheduler keeps a group on one worker, so a server starts once. With pytest 9.2 xdist 3.8's
write no longer changes the id: every item went its own way and a server started on each worker
that got one of its items. The group is written again after xdist's hook, the way xdist writes
it, only where the id does not already end with it.
"""

from __future__ import annotations

import pytest

from pytest_infx.compat.pytest import append_to_node_id
from pytest_infx.plugin.collect.files import ref_of

PLUGIN_NAME = "infx-server-groups"


def group_suffix(item: pytest.Item) -> str | None:
    """``@`` and the item's ``xdist_group`` names, sorted and joined as xdist joins them."""
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    return "@" + "_".join(sorted(names)) if names else None


class ServerGroupIds:
    """Registered on xdist workers only: the controller reads the ids, the worker writes them."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if not getattr(config.option, "loadgroup", False):
            return
        for item in items:
            suffix = group_suffix(item) if ref_of(item) is not None else None
            if suffix is not None:
                append_to_node_id(item, suffix)
