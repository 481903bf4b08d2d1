"""Training logs: where a run is read from (``sources``), its readers per format, the metric-name
alias table, the signals derived from it (``signals``), its verdict and its chart, and a run read as
it grows (``growing``: the kept series, the fault scan, the judgement of a check)."""
