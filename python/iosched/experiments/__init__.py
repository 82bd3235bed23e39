"""Paper reproductions: sweeps over scenario files, plots and reports.

Each module (e.g. `seltzer1990`) reads a catalogue under experiments/<paper>/ in the
repository and writes PNG plots plus report.md into an output directory.
"""
