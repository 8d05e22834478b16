/* real_corpus: the tally every check of real files (tests/fixtures/real)
 * gives, so that one report can count the whole corpus by kind.
 *
 * A kind's suite owns its checks (what "read right" means for a model
 * config, a training log or an nccl-tests paste); it exposes them as a
 * tally function that checks every file of its folder once and counts.
 * The kind's own test asserts on its tally; test_real_corpus.c adds the
 * tallies up, adds the folders that follow the generic expected.tsv format
 * of tests/fixtures/real/README.md, and fails below 95% overall.
 */
#ifndef SCALEPLAN_TESTS_REAL_CORPUS_H
#define SCALEPLAN_TESTS_REAL_CORPUS_H

typedef struct {
    int files;         /* files of the folder, each counted once */
    int right;         /* read as the table says (refusals that came out right included) */
    int refused;       /* of those, refusals the table expects and that came out right */
    int fixes_tried;   /* refusals whose suggested fix the check ran */
    int fixes_worked;  /* ... and that then read (or ended in the table's refusal) */
    int unlisted;      /* files on disk that the table does not name (counted as not right) */
} real_tally_t;

/* Each checks every file of its folder and fills t (zeroed first); what
 * differs is printed to stderr, one line a file. */
void real_configs_tally(real_tally_t *t);   /* tests/test_hfstructure.c: real/configs */
void real_logs_tally(real_tally_t *t);      /* tests/test_real_logs.c: real/logs */
void real_nccltests_tally(real_tally_t *t); /* tests/test_real_nccltests.c: real/nccltests */

/* Files directly under tests/fixtures/DIR that are corpus entries (not
 * SOURCES.md, README.md or an expected table); with dirs, the
 * subdirectories holding a config.json instead. -1 when DIR is absent. */
int real_count_entries(const char *dir, int dirs);

/* Files directly under the folder at path folder (corpus entries as
 * above) that the table at table_path (TSV or CSV, the file name first)
 * names in no row; each is printed. 0 when either cannot be read. */
int real_count_unlisted(const char *folder, const char *table_path);

#endif
