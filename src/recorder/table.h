/* table.h — the `p` hotkey: each CPU's newest events as a readable table. */
#ifndef TRACE_TABLE_H
#define TRACE_TABLE_H

#define TABLE_NEWEST 8                /* events shown per CPU */

void table_print_newest(void);

#endif
