"""The first shape of the history: runs, configs and points with their natural keys."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("branch", sa.String(300), nullable=False),
        sa.Column("commit", sa.String(64), nullable=False),
        sa.Column("started", sa.DateTime(timezone=True), nullable=False),
        sa.Column("machine", sa.String(200), nullable=False),
        sa.Column("plugin_version", sa.String(50), nullable=False),
        sa.UniqueConstraint("run_id", "attempt", name="uq_runs_run_attempt"),
    )
    op.create_table(
        "configs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("model_prefix", sa.String(200), nullable=False),
        sa.Column("hardware", sa.String(100), nullable=False),
        sa.Column("framework", sa.String(100), nullable=False),
        sa.Column("engine_version", sa.String(200), nullable=False),
        sa.Column("precision", sa.String(50), nullable=False),
        sa.Column("spec_method", sa.String(100), nullable=False),
        sa.Column("topology", sa.String(200), nullable=False),
        sa.Column("tp", sa.Integer, nullable=False),
        sa.Column("ep", sa.Integer, nullable=False),
        sa.Column("dp_attention", sa.Boolean, nullable=False),
        sa.Column("gpus", sa.Integer, nullable=False),
        sa.UniqueConstraint(
            "model_prefix",
            "hardware",
            "framework",
            "engine_version",
            "precision",
            "spec_method",
            "topology",
            name="uq_configs_identity",
        ),
    )
    op.create_table(
        "points",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run", sa.Integer, sa.ForeignKey("runs.id"), nullable=False),
        sa.Column("config", sa.Integer, sa.ForeignKey("configs.id"), nullable=False),
        sa.Column("kind", sa.String(50), nullable=False),
        sa.Column("isl", sa.Integer, nullable=False),
        sa.Column("osl", sa.Integer, nullable=False),
        sa.Column("conc", sa.Integer, nullable=False),
        sa.Column("offload_mode", sa.String(50), nullable=False),
        sa.Column("cell", sa.String(200), nullable=False),
        sa.Column("item", sa.String(500), nullable=False),
        sa.Column("recipe", sa.String(300), nullable=False),
        sa.Column("dataset", sa.String(500), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("metrics", sa.JSON, nullable=False),
        sa.Column("golden", sa.String(20), nullable=True),
        sa.Column("written", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint(
            "run",
            "config",
            "kind",
            "isl",
            "osl",
            "conc",
            "offload_mode",
            "cell",
            name="uq_points_natural",
        ),
    )


def downgrade() -> None:
    op.drop_table("points")
    op.drop_table("configs")
    op.drop_table("runs")
