"""The results history: every measured point stored in a database, the baseline gate that
compares a run with an earlier one, the trend of a point over runs and the dashboard.

A results folder holds one run; a team needs its runs side by side, so each finished point is
also written to a SQL database (SQLite in the results folder by default, a team's PostgreSQL
server on request) keyed as InferenceX keys its own results.
"""
