"""Engine environments: isolated, cached virtualenvs for the engines and clients the plugin drives.

Engines never join the plugin's dependency set; each lives in its own pinned virtualenv under the
user's cache and is reached only as a subprocess.
"""
