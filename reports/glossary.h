/* glossary: what each abbreviation of scaleplan's outputs means, and what
 * each framework calls it.
 *
 * One table holds every term the layout notation (models/layout_text.h)
 * and the tables use: a short gloss for the legend printed under a table, a
 * sentence for the report's glossary, and the flag or config key of each
 * framework that sets it (Megatron-LM's arguments.py, NeMo 2 / Megatron
 * Bridge's config fields, DeepSpeed's ds_config keys, torchtitan's
 * job_config.py). "-" where a framework has no such knob.
 *
 * A token of an output ("TP4", "VPP41", "rc=full:54", "mb1", "dist-opt",
 * "MFU") names a term when it is the term, or the term followed by a number,
 * "=", ":" or "(".
 */
#ifndef SCALEPLAN_REPORTS_GLOSSARY_H
#define SCALEPLAN_REPORTS_GLOSSARY_H

#include <stddef.h>

typedef struct {
    const char *term;       /* as printed: "TP", "VPP", "rc=full", "dist-opt" */
    const char *gloss;      /* a few words for a legend: "tensor-parallel GPUs" */
    const char *sentence;   /* one sentence for the glossary */
    const char *megatron;   /* Megatron-LM command-line flag */
    const char *nemo;       /* NeMo 2 / Megatron Bridge config field */
    const char *deepspeed;  /* DeepSpeed ds_config key (or API argument) */
    const char *torchtitan; /* torchtitan TOML key */
} glossary_entry_t;

/* The whole table, in legend order; *n receives its length. Static data:
 * never freed. */
const glossary_entry_t *glossary_entries(int *n);

/* The entry token names, or NULL. token is one word of an output: it names
 * a term when it equals the term or continues it with a digit, '=', ':' or
 * '(' ("TP4", "rc=full:54", "rc=sel(attn,norm)"); trailing punctuation
 * (",", ";", ")") is ignored. */
const glossary_entry_t *glossary_find(const char *token, size_t len);

/* The legend for text: "legend: TP: tensor-parallel GPUs; PP: pipeline
 * stages; ..." listing, in table order, each term that a word of text
 * names (words are split at spaces). Writes "" when text names none.
 * Returns the length the whole legend takes, as snprintf does. */
int glossary_legend(const char *text, char *buf, size_t cap);

#endif
