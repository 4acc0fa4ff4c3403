"""The label of a point's server: the name a reader recognises in the plan, progress lines,
log file names and messages.

A recipe key is not bounded in length (a collector script's name can be long), while a label
names files and shares a line with other text, so it is bounded: the launcher refuses a label
longer than :data:`MAX_LABEL`. Deriving every label here, within that bound, is what lets any
valid key plan and launch.
"""

from __future__ import annotations

import hashlib

MAX_LABEL = 64
"""The launcher's bound on a label (``ServerSpec`` in :mod:`pytest_infx.launch.spec`)."""
_DIGEST = 8


def server_label(recipe_key: str, point: str) -> str:
    """``<recipe key>-<point>`` where that fits; otherwise the key is cut and the start of its
    digest keeps two long keys that begin alike apart. The point stays whole, since it is what
    tells one recipe's servers apart."""
    label = f"{recipe_key}-{point}"
    if len(label) <= MAX_LABEL:
        return label
    digest = hashlib.sha256(recipe_key.encode()).hexdigest()[:_DIGEST]
    room = MAX_LABEL - len(point) - _DIGEST - 2
    if room >= 1:
        return f"{recipe_key[:room]}-{digest}-{point}"
    whole = hashlib.sha256(label.encode()).hexdigest()[:_DIGEST]
    return f"{label[: MAX_LABEL - _DIGEST - 1]}-{whole}"
