"""timeline: one dump's events in time order (timeline, merge in C), and
what is read off them: losses and their causes, BEGIN/END pairs, IPI
flows, argument formatting and --stats."""
