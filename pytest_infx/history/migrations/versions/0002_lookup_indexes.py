"""Indexes for the two reads that grow with the history: the baseline lookup of a point's
config, and a trend's rows of one item."""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_points_lookup", "points", ["config", "kind", "conc", "status"])
    op.create_index("ix_points_item", "points", ["item"])


def downgrade() -> None:
    op.drop_index("ix_points_item", table_name="points")
    op.drop_index("ix_points_lookup", table_name="points")
