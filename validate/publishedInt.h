/* publishedInt: what the files of the published-run replay share, and
 * nothing else includes: only validate/published*.c include it (SQLite's
 * *Int.h split, issue 34). validate/published.h gives the rules; the files
 * take them in turn:
 *
 *   published_text.c   a cell's text read as numbers and words, as the
 *                      other tables spell them ("8K", "14,080", "TP=8")
 *   published_rules.c  rules 1-4 column by column: the model, the GPU and
 *                      cluster, the layout and engine a column names
 *   published_setup.c  one row set up from them (rules 1-4) and the
 *                      fastest of its open choices (rule 5)
 *   published.c        the entry points: a row replayed and compared
 *                      with what it measured (rule 6), the file's rows
 *   published_stats.c  errors, groups and orderings of the replayed rows
 */
#ifndef SCALEPLAN_VALIDATE_PUBLISHEDINT_H
#define SCALEPLAN_VALIDATE_PUBLISHEDINT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/csv.h"
#include "frameworks/framework.h"
#include "sim/scenario.h"
#include "sim/step.h"
#include "validate/published.h"

/* One row's simulation as rules 1-4 set it up, and what rule 5 leaves open. */
typedef struct {
    scenario_t s;
    fw_preset_t fw;
    bool stand_in;     /* the framework has no preset: fw runs its engine */
    bool open_choices; /* micro-batch (and recompute) left to the fastest */
    bool recompute_given, vpp_given; /* the row's own choices, kept open or not */
    bool mb_open;        /* no micro-batch given */
    bool sp_open;        /* TP without a word on sequence parallelism, under a
                            preset that runs it but not by default */
    bool vpp_count_open; /* "interleaved" without a count under a Megatron-LM
                            preset, which has no default count */
} row_setup_t;

/* published_text.c: a cell's text read as numbers and words */
const char *pub_cell(const csv_t *c, int row, const char *column);
const char *pub_find_ci(const char *hay, const char *needle);
bool pub_has(const char *hay, const char *needle);
double pub_lead_num_base(const char *s, bool binary);
double pub_lead_num(const char *s);
int pub_lead_tokens(const char *s);
int pub_lead_int(const char *s);
int pub_int_after(const char *text, const char *key);
int pub_degree_in(const char *text, const char *word);
bool pub_has_word(const char *text, const char *word);
int pub_int_before(const char *text, const char *word);
int pub_first_int(const char *text);
double pub_notes_batch(const char *notes, bool *tokens);
double pub_num_before(const char *text, const char *at);
double pub_num_after(const char *text, const char *key);
const char *pub_find_any(const char *text, const char *const *keys, size_t n);

/* published_rules.c: rules 1-4 read from the columns */
int pub_model_from_columns(const csv_t *c, int i, int tp, model_t *m, err_t *err);
void pub_add_assumed(pub_row_t *v, const char *what);
void pub_row_positions(const csv_t *c, int i, model_t *m, pub_row_t *v);
model_t pub_catalog_block(const model_t *catalog, const model_t *cols, const csv_t *c, int i);
int pub_model_from_catalog(const char *name, model_t *m, err_t *err);
int pub_row_gpu(catalog_t *cat, const char *text, gpu_t *g);
void pub_row_cluster(catalog_t *cat, const char *text, const gpu_t *g, char *out, size_t cap);
const char *pub_row_fabric(const char *text);
int pub_row_nics(const char *text);
int pub_row_gpus_per_node(const char *text);
int pub_row_vpp(const char *text, int pp, int stages_per_rank_interleaved);
void pub_row_offload(const char *text, layout_t *l);
void pub_row_zero(const char *text, layout_t *l);
void pub_row_recompute(const char *text, const fw_preset_t *fw, layout_t *l);
bool pub_row_precision(const char *text, const fw_preset_t *fw, layout_t *l);
void pub_uneven_split(layout_t *l, const model_t *m);
int pub_framework_split(layout_t *l, const model_t *m, layout_split_rule_t rule, err_t *err);
void pub_notes_flags(const char *notes, sim_options_t *o, layout_t *l);
void pub_framework_flags(const char *text, sim_options_t *o, layout_t *l);

/* published_setup.c: one row set up (rules 1-4) and its open choices (rule 5) */
void pub_skip(pub_row_t *v, const char *why);
int pub_setup_row(catalog_t *cat, const csv_t *c, int i, pub_row_t *v, row_setup_t *r,
                  err_t *err);
int pub_open_choices(sim_ctx_t *ctx, row_setup_t *r, bool keep, sim_result_t *best,
                     bool *found, err_t *err);

#endif
