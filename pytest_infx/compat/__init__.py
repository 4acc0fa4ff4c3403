"""The wall between pytest-infx and the internals of the packages it runs inside.

pytest, pytest-xdist and syrupy promise their documented APIs; a few things pytest-infx does
have no documented way (a replacement Slurm worker started off xdist's event loop, a ``-m``
expression evaluated before collection, syrupy's extension hooks that its README calls
unstable). Every such name is touched in one module per package here and nowhere else, and
:mod:`pytest_infx.compat.versions` lists each with why it is needed and the versions it was
checked with, so that an upgrade breaks a test rather than a sweep.
"""
