"""What "pinned by digest" means for a container image, defined once.

A tag can move to another build under the same name; only ``@sha256:<64 hex digits>`` names one
build. The recipe rules (before a run) and the launcher (before ``docker run``) both refuse an
image that is not pinned, so they must agree on what pinned means.
"""

from __future__ import annotations

import re
from typing import Final

IMAGE_DIGEST: Final = re.compile(r"@sha256:[0-9a-f]{64}$")


def pinned(image: str) -> bool:
    """Whether ``image`` ends in a full ``@sha256:`` digest."""
    return IMAGE_DIGEST.search(image) is not None


def version_of(image: str) -> str:
    """The engine version an image names: its tag, without the registry, the repository or a
    ``@sha256:`` digest (a digest-pinned ``lmsysorg/sglang:v0.5.14-cu130@sha256:...`` is
    ``v0.5.14-cu130``, as its unpinned twin is); ``latest`` for an untagged name and the
    digest's first 12 digits for an image named by its digest alone."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[-1]
    if digest:
        return digest.removeprefix("sha256:")[:12]
    return "latest" if name else ""
