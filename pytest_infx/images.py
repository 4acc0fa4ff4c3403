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
