/* table.h — the `p` hotkey: each CPU's newest events as a readable table,
 * or on a big machine the newest of all CPUs together. */
#ifndef RECORDER_TABLE_H
#define RECORDER_TABLE_H

#include <stdbool.h>

#define TABLE_NEWEST   8                /* events shown per CPU */
/* More CPUs than this (a table that would not fit the screen): without
 * `full` only the TABLE_MERGED newest events of all CPUs together, by
 * time; `S` asks for the full table. */
#define TABLE_CPUS_MAX 24
#define TABLE_MERGED   24

void table_print_newest(bool full);

#endif
