"""Recipes into items: the recipe files' collectors, the items' functions, the runner's
selection and grouping, the lint items, and what happens to the selected items before they run
(preflight, the engines' argv check, the plan lines)."""
