"""What a recipe item does when it runs, one module per kind of point (SPEED-Bench cell, AgentX
point).

These are the pytest side of the benchmark packages: they take the session context and a server
from the fixtures and write results and junit properties. Keeping them out of ``speedbench/`` and
``agentic/`` lets those packages stay free of pytest, the session context and the report.
"""
