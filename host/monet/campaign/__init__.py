"""Campaigns: `plan` expands a campaign file into points, costs them, picks their models and stores each point as
it finishes; `points` runs them as pytest items, `workers` on Dask workers; `results` reads a results folder
back (for the report and the models)."""
