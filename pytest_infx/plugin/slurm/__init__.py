"""xdist workers as Slurm jobs: the job helpers, the controller's hooks, the scheduling of server
groups across jobs that die and are replaced, and the replacement jobs themselves."""
