"""export: a timeline written in one of decode's formats: textout, csvout,
jsonout, perfettoout, ctfout, rawout; cwriters are their writers in C;
exportfile writes one to a path the way decode and capture do."""
