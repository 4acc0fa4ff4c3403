"""What a run shows and writes besides the items' own reports: live progress, the sweep's report
files, the end-of-run summary and the terminal's header and summary lines."""
