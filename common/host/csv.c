#include "host/csv.h"

#include <string.h>

static void field(FILE *f, const char *s)
{
    if (!s) s = "";
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void csv_row(FILE *f, const char *const *fields, int nfields)
{
    for (int i = 0; i < nfields; i++) {
        if (i) fputc(',', f);
        field(f, fields[i]);
    }
    fputc('\n', f);
}

FILE *csv_open(const char *path, const char *const *columns, int ncols)
{
    FILE *f = fopen(path, "a+");
    if (!f) {
        fprintf(stderr, "csv: cannot open %s\n", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    if (ftell(f) == 0) csv_row(f, columns, ncols);
    return f;
}
