"""util: small helpers every role may use: text tables, progress lines,
output sinks, and outfile (an output never replaces an input; written whole
or not at all). Imports nothing else of btlib."""
