/* validate: print the simulator's error on every published run in
 * tests/fixtures/validation/throughput.csv (make validate).
 *
 *     validate [throughput.csv] [--profile profile.json]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "sim/validation.h"

int main(int argc, char **argv)
{
    const char *csv = "tests/fixtures/validation/throughput.csv";
    const char *prof_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
            prof_path = argv[++i];
        else
            csv = argv[i];
    }
    err_t err;
    profile_t prof;
    if (prof_path && prof_load(prof_path, &prof, &err)) {
        fprintf(stderr, "validate: %s\n", err.msg);
        return 2;
    }
    val_row_t *rows;
    int n;
    if (val_run(csv, prof_path ? &prof : NULL, &rows, &n, &err)) {
        fprintf(stderr, "validate: %s\n", err.msg);
        return 1;
    }
    printf("%-5s %-22s %-9s %6s %-52s %-14s %10s %10s %8s\n", "row", "model", "gpu", "gpus",
           "layout", "metric", "published", "predicted", "error");
    for (int i = 0; i < n; i++) {
        const val_row_t *r = &rows[i];
        if (r->skipped) {
            printf("%-5s %-22s skipped: %s\n", r->row_id, r->model, r->note);
            continue;
        }
        printf("%-5s %-22.22s %-9s %6d %-52.52s %-14s %10.3f %10.3f %+7.1f%%%s\n", r->row_id,
               r->model, r->gpu, r->gpus, r->layout, val_metric_name(r->metric), r->published,
               r->predicted, 100 * r->error, r->full_config ? "" : "  (partial)");
    }
    double med, worst;
    int k;
    val_summary(rows, n, true, &med, &worst, &k);
    printf("\nfull-configuration rows: %d, median |error| %.1f%%, worst %.1f%%\n", k, 100 * med,
           100 * worst);
    val_summary(rows, n, false, &med, &worst, &k);
    printf("all rows:                %d, median |error| %.1f%%, worst %.1f%%\n", k, 100 * med,
           100 * worst);
    free(rows);
    if (prof_path)
        prof_free(&prof);
    return 0;
}
