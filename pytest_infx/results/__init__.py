"""The results folder: its layout, the files in it and the one verdict vocabulary."""
