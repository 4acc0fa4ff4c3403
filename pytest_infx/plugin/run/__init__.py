"""Running the items: the fixtures that hand each item its server, the session's shared pool,
resume, and the kind of each item (its fresh or reused runnable and its record)."""
