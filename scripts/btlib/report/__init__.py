"""report: what the workloads measured (workloads, stresscheck, benchlines),
their plots (wlplot), and the lab's table of many machines (labtable):
scripts/report's library; and what a captured stream carried, for make
bench (streambench)."""
