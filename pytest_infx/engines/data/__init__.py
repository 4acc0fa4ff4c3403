"""Scripts that run with an engine's parser environment's python, which has the engine's own
argument parser and nothing of the plugin. Stored as ``*.py.txt`` so the plugin's type checker,
which has no engine installed, skips them.
"""
