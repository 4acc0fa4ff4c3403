"""Files the plugin writes and reads: atomic writes, bounded text and YAML reads, the cache
folder and the store of derived values."""
