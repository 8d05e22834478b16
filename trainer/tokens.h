/* tokens: the trainer's data - token files, a byte-level tokenizer, a
 * built-in corpus, and which sequences each rank reads at each step.
 *
 * A token file is a 32-byte header followed by the tokens, little-endian:
 *   magic "SPTOKEN1" (8 bytes), u32 version (1), u32 bytes per token (2 or
 *   4), u64 token count, u32 vocabulary size, u32 reserved (0).
 * Any other file is read as text and tokenized byte by byte (token = byte
 * value, vocabulary 256), so any text file trains a model whose vocabulary
 * has at least 256 entries. With no file, a deterministic built-in corpus
 * (English-like sentences from a seeded generator) is used, so a run needs
 * no data at all.
 *
 * Batches are fixed by the step alone: sequence g of step s starts at token
 * ((s * global_batch + g) * seq_len) modulo the usable length, and a
 * data-parallel rank reads only its own slice of the step's sequences. A
 * run resumed at step s therefore sees exactly the data it would have seen.
 */
#ifndef SCALEPLAN_TRAINER_TOKENS_H
#define SCALEPLAN_TRAINER_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define TOK_MAGIC "SPTOKEN1"
#define TOK_HEADER_BYTES 32
#define TOK_BYTE_VOCAB 256 /* vocabulary of the byte-level tokenizer */

typedef struct {
    uint32_t *tokens;  /* heap, n of them */
    size_t n;
    int vocab;         /* tokens are < vocab */
    char *source;      /* heap: file path (any length), or "built-in corpus" */
} tok_data_t;

/* Load path: a token file (by its magic) or any other file as text bytes.
 * ERR_INPUT naming the file for a missing file, a damaged header, a size
 * that disagrees with the header, or a token beyond the header's vocab. */
int tok_load(const char *path, tok_data_t *d, err_t *err);

/* The built-in corpus: n_bytes of generated text (deterministic in seed),
 * byte-tokenized. */
int tok_builtin(size_t n_bytes, uint64_t seed, tok_data_t *d, err_t *err);

/* Tokenize text bytes (token = byte). */
int tok_from_text(const char *text, size_t len, const char *source, tok_data_t *d, err_t *err);

/* Write tokens as a token file (bytes_per_token 2 needs vocab <= 65536). */
int tok_write(const char *path, const uint32_t *tokens, size_t n, int vocab,
              int bytes_per_token, err_t *err);

void tok_free(tok_data_t *d);

/* Check that d can feed sequences of seq_len for a model with model_vocab
 * entries: enough tokens, vocabulary large enough. */
int tok_check(const tok_data_t *d, int seq_len, int model_vocab, err_t *err);

/* Inputs and targets (seq_len each) of sequence g (0 <= g < global_batch)
 * of step `step`; targets are the inputs shifted by one token. */
void tok_sequence(const tok_data_t *d, long step, int global_batch, int g, int seq_len,
                  int32_t *inputs, int32_t *targets);

#endif
