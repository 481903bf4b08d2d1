"""Alembic's entry point: migrations run on the connection the state store hands over.

The state store opens the connection (and, on PostgreSQL, takes an advisory lock
so replicas starting together do not race) and passes it in ``config.attributes``.
"""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(
    connection=connection, target_metadata=None, render_as_batch=connection.dialect.name == "sqlite"
)
with context.begin_transaction():
    context.run_migrations()
