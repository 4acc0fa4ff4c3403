"""The history's tables as SQLAlchemy Core sees them: what the queries are written against.

The migrations under ``migrations/versions`` build the same tables step by step; a test checks
that a database migrated to the head has exactly these columns, so the two cannot drift apart.
The natural keys are InferenceX's: a run is (run id, attempt), a point is (run, config, kind,
ISL, OSL, concurrency, offload mode) plus ``cell``, the part of our point ids that no InferenceX
column holds (a SPEED-Bench cell's draft length and thinking mode, an AgentX point's variant).
ISL and OSL are 0 where a kind has none (SPEED-Bench, AgentX), since a NULL never equals
another NULL in a unique key and a rerun would add a row.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

METADATA: Final = MetaData()
CONFIG_KEY: Final = (
    "model_prefix",
    "hardware",
    "framework",
    "engine_version",
    "precision",
    "spec_method",
    "topology",
)
"""The columns that identify a config: one ``configs`` row per value of them."""

runs: Final = Table(
    "runs",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(200), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("branch", String(300), nullable=False),
    Column("commit", String(64), nullable=False),
    Column("started", DateTime(timezone=True), nullable=False),
    Column("machine", String(200), nullable=False),
    Column("plugin_version", String(50), nullable=False),
    Column("promoted_from", String(220), nullable=True),
    Column("promoted_by", String(200), nullable=True),
    UniqueConstraint("run_id", "attempt", name="uq_runs_run_attempt"),
)

configs: Final = Table(
    "configs",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("model_prefix", String(200), nullable=False),
    Column("hardware", String(100), nullable=False),
    Column("framework", String(100), nullable=False),
    Column("engine_version", String(200), nullable=False),
    Column("precision", String(50), nullable=False),
    Column("spec_method", String(100), nullable=False),
    Column("topology", String(200), nullable=False),
    Column("tp", Integer, nullable=False),
    Column("ep", Integer, nullable=False),
    Column("dp_attention", Boolean, nullable=False),
    Column("gpus", Integer, nullable=False),
    UniqueConstraint(*CONFIG_KEY, name="uq_configs_identity"),
)

points: Final = Table(
    "points",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run", Integer, ForeignKey("runs.id"), nullable=False),
    Column("config", Integer, ForeignKey("configs.id"), nullable=False),
    Column("kind", String(50), nullable=False),
    Column("isl", Integer, nullable=False),
    Column("osl", Integer, nullable=False),
    Column("conc", Integer, nullable=False),
    Column("offload_mode", String(50), nullable=False),
    Column("cell", String(200), nullable=False),
    Column("item", String(500), nullable=False),
    Column("recipe", String(300), nullable=False),
    Column("dataset", String(500), nullable=False),
    Column("status", String(10), nullable=False),
    Column("metrics", JSON, nullable=False),
    Column("golden", String(20), nullable=True),
    Column("reason", Text, nullable=False, server_default=""),
    Column("written", DateTime(timezone=True), nullable=False),
    UniqueConstraint(
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
    Index("ix_points_lookup", "config", "kind", "conc", "status"),
    Index("ix_points_item", "item"),
)
