"""A point's reason for its stored verdict (own checks, golden or baseline gate), and a run's
provenance when ``infx db promote`` copied it from another run."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("points") as batch:
        batch.add_column(sa.Column("reason", sa.Text, nullable=False, server_default=""))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("promoted_from", sa.String(220), nullable=True))
        batch.add_column(sa.Column("promoted_by", sa.String(200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("promoted_by")
        batch.drop_column("promoted_from")
    with op.batch_alter_table("points") as batch:
        batch.drop_column("reason")
