from __future__ import annotations

from e2e.conftest import sweep as sweep
