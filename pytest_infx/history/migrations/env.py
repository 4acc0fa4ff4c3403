"""Alembic's entry for the history's migrations: it runs them on the connection the store
opened (and locked), so a migration and the writes after it see one database."""

from __future__ import annotations

from alembic import context

from pytest_infx.history.schema import METADATA

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=METADATA)
with context.begin_transaction():
    context.run_migrations()
