"""Golden acceptance-length curves: model, file format, store, lookup, drift gate, syrupy extension.

Import the submodule you need (``pytest_infx.golden.extension`` pulls in syrupy; the others do not).
"""
