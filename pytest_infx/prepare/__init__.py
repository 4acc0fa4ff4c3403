"""What a point needs before it runs: the catalog collection works from, the plan of its
server, the preflight checks, the checkpoint precision check and the server spec it launches."""
