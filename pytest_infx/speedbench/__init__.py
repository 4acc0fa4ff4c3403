"""SPEED-Bench primitives: dataset, streaming client, counters and AL, per-cell checks."""
