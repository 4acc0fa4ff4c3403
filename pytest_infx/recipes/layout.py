"""Which files under the recipe folder are recipes, without importing the loader.

Collection asks this for every file pytest walks past, before anything is parsed.
"""

from __future__ import annotations

from pathlib import PurePath

RECIPE_SUFFIXES = (".yaml", ".yml")


def is_recipe(relative: PurePath) -> bool:
    """A YAML file whose path (relative to the recipe folder) has no ``_base`` or hidden part."""
    return relative.suffix in RECIPE_SUFFIXES and not any(
        part.startswith(("_", ".")) for part in relative.parts
    )
