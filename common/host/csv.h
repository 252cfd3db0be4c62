/* CSV output: one header line when the file is new or empty, then rows. Fields that hold a comma,
 * a quote or a newline are quoted (RFC 4180). */
#ifndef FMHA_CSV_H
#define FMHA_CSV_H

#include <stdio.h>

/* Opens path for appending; writes the header when the file is empty. NULL on failure. */
FILE *csv_open(const char *path, const char *const *columns, int ncols);
void  csv_row(FILE *f, const char *const *fields, int nfields);

#endif
