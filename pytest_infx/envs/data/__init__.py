"""Files the engine environments need at install time: conversion scripts and chat templates.

Scripts are stored as ``*.py.txt``: they run with the engine env's python (torch, transformers),
which the plugin's own interpreter and type checker do not have.
"""
