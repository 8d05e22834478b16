#include "trainer/tokens.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/rng.h"
#include "common/strfmt.h"

static uint32_t read_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t read_u64(const unsigned char *p)
{
    return (uint64_t)read_u32(p) | (uint64_t)read_u32(p + 4) << 32;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
    put_u32(p, (uint32_t)v);
    put_u32(p + 4, (uint32_t)(v >> 32));
}

int tok_from_text(const char *text, size_t len, const char *source, tok_data_t *d, err_t *err)
{
    memset(d, 0, sizeof *d);
    d->tokens = malloc((len ? len : 1) * sizeof *d->tokens);
    if (!d->tokens)
        return err_set(err, ERR_RUNTIME, "out of memory tokenizing %zu bytes", len);
    for (size_t i = 0; i < len; i++)
        d->tokens[i] = (unsigned char)text[i];
    d->n = len;
    d->vocab = TOK_BYTE_VOCAB;
    if (!(d->source = str_printf("%s", source))) {
        tok_free(d);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    return ERR_OK;
}

static int parse_token_file(const char *path, const unsigned char *buf, size_t len,
                            tok_data_t *d, err_t *err)
{
    if (len < TOK_HEADER_BYTES)
        return err_setf(err, ERR_INPUT, path, NULL, "token file header is truncated (%zu bytes)",
                        len);
    uint32_t version = read_u32(buf + 8), bpt = read_u32(buf + 12);
    uint64_t n = read_u64(buf + 16);
    uint32_t vocab = read_u32(buf + 24);
    if (version != 1)
        return err_setf(err, ERR_INPUT, path, "version", "unsupported token file version %u",
                        version);
    if (bpt != 2 && bpt != 4)
        return err_setf(err, ERR_INPUT, path, "bytes_per_token", "must be 2 or 4 (got %u)", bpt);
    if (vocab < 1 || (bpt == 2 && vocab > 65536))
        return err_setf(err, ERR_INPUT, path, "vocab", "invalid vocabulary size %u", vocab);
    if (n > (len - TOK_HEADER_BYTES) / bpt || TOK_HEADER_BYTES + n * bpt != len)
        return err_setf(err, ERR_INPUT, path, NULL,
                        "the header says %llu tokens (%llu bytes) but the file has %zu bytes of "
                        "tokens: truncated or damaged",
                        (unsigned long long)n, (unsigned long long)(n * bpt),
                        len - TOK_HEADER_BYTES);
    d->tokens = malloc((n ? n : 1) * sizeof *d->tokens);
    if (!d->tokens)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", path);
    const unsigned char *p = buf + TOK_HEADER_BYTES;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t t = bpt == 2 ? (uint32_t)p[2 * i] | (uint32_t)p[2 * i + 1] << 8 : read_u32(p + 4 * i);
        if (t >= vocab) {
            free(d->tokens);
            d->tokens = NULL;
            return err_setf(err, ERR_INPUT, path, NULL, "token %llu is %u, beyond the vocabulary %u",
                            (unsigned long long)i, t, vocab);
        }
        d->tokens[i] = t;
    }
    d->n = (size_t)n;
    d->vocab = (int)vocab;
    if (!(d->source = str_printf("%s", path))) {
        tok_free(d);
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", path);
    }
    return ERR_OK;
}

int tok_load(const char *path, tok_data_t *d, err_t *err)
{
    memset(d, 0, sizeof *d);
    char *buf = NULL;
    size_t len = 0;
    int rc = fileio_read_all(path, &buf, &len, err);
    if (rc)
        return rc;
    if (len >= 8 && memcmp(buf, TOK_MAGIC, 8) == 0)
        rc = parse_token_file(path, (const unsigned char *)buf, len, d, err);
    else
        rc = tok_from_text(buf, len, path, d, err);
    free(buf);
    return rc;
}

int tok_write(const char *path, const uint32_t *tokens, size_t n, int vocab,
              int bytes_per_token, err_t *err)
{
    if (bytes_per_token != 2 && bytes_per_token != 4)
        return err_set(err, ERR_INPUT, "bytes per token must be 2 or 4 (got %d)", bytes_per_token);
    if (vocab < 1 || (bytes_per_token == 2 && vocab > 65536))
        return err_set(err, ERR_INPUT, "vocabulary %d does not fit %d-byte tokens", vocab,
                       bytes_per_token);
    size_t len = TOK_HEADER_BYTES + n * (size_t)bytes_per_token;
    unsigned char *buf = calloc(1, len);
    if (!buf)
        return err_set(err, ERR_RUNTIME, "out of memory writing %s", path);
    memcpy(buf, TOK_MAGIC, 8);
    put_u32(buf + 8, 1);
    put_u32(buf + 12, (uint32_t)bytes_per_token);
    put_u64(buf + 16, n);
    put_u32(buf + 24, (uint32_t)vocab);
    unsigned char *p = buf + TOK_HEADER_BYTES;
    int rc = ERR_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        if (tokens[i] >= (uint32_t)vocab) {
            rc = err_set(err, ERR_INPUT, "token %zu is %u, beyond the vocabulary %d", i, tokens[i],
                         vocab);
        } else if (bytes_per_token == 2) {
            p[2 * i] = (unsigned char)tokens[i];
            p[2 * i + 1] = (unsigned char)(tokens[i] >> 8);
        } else {
            put_u32(p + 4 * i, tokens[i]);
        }
    }
    if (!rc)
        rc = fileio_write_atomic(path, buf, len, err);
    free(buf);
    return rc;
}

void tok_free(tok_data_t *d)
{
    free(d->tokens);
    free(d->source);
    memset(d, 0, sizeof *d);
}

int tok_check(const tok_data_t *d, int seq_len, int model_vocab, err_t *err)
{
    if (d->n < (size_t)seq_len + 2)
        return err_setf(err, ERR_INPUT, d->source, NULL,
                        "%zu tokens are too few for sequences of %d (need at least %d)", d->n,
                        seq_len, seq_len + 2);
    if (d->vocab > model_vocab)
        return err_setf(err, ERR_INPUT, d->source, NULL,
                        "the data's vocabulary (%d) is larger than the model's (%d)", d->vocab,
                        model_vocab);
    return ERR_OK;
}

void tok_sequence(const tok_data_t *d, long step, int global_batch, int g, int seq_len,
                  int32_t *inputs, int32_t *targets)
{
    /* windows of seq_len + 1 tokens start anywhere in [0, usable) */
    size_t usable = d->n - (size_t)seq_len - 1;
    size_t start = (size_t)(((unsigned long long)step * (unsigned long long)global_batch +
                             (unsigned long long)g) *
                            (unsigned long long)seq_len % usable);
    for (int t = 0; t < seq_len; t++) {
        inputs[t] = (int32_t)d->tokens[start + (size_t)t];
        targets[t] = (int32_t)d->tokens[start + (size_t)t + 1];
    }
}

/* ------------------------------------------------------------ built-in corpus */

/* Word lists for a small generative grammar: enough structure (agreement,
 * fixed phrases, counting) for a model to learn, in plain text. */
static const char *const SUBJECTS[] = {
    "the engineer", "a small team", "the scheduler", "our cluster", "the planner", "each node",
    "the first rank", "the storage system", "every switch", "the night shift", "a new model",
    "the budget owner", "the training job", "one slow GPU", "the network", "the operator"};
static const char *const VERBS[] = {
    "measures", "doubles", "restarts", "checks", "reserves", "predicts", "saves", "loads",
    "compares", "repairs", "watches", "schedules", "counts", "replaces", "moves", "tunes"};
static const char *const OBJECTS[] = {
    "the step time", "a checkpoint", "the bandwidth", "every failure", "the learning rate",
    "the batch size", "a spare node", "the loss curve", "the memory use", "the cost per day",
    "the pipeline bubble", "a broken link", "the gradient norm", "the token count",
    "the throughput", "a long queue"};
static const char *const PLACES[] = {
    "before lunch", "at night", "after each doubling", "on the second day", "in the morning",
    "during the run", "at every step", "when the alert fires", "before the deadline",
    "after the restart"};
static const char *const NUMBERS[] = {"one", "two", "three", "four", "five", "six", "seven",
                                      "eight", "nine", "ten"};

#define PICK(list, r) list[(r) % (sizeof list / sizeof list[0])]

/* Append s (and a NUL) if it fits; returns the new length. */
static size_t put(char *buf, size_t len, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (len + n >= cap)
        n = cap - 1 - len;
    memcpy(buf + len, s, n);
    buf[len + n] = '\0';
    return len + n;
}

int tok_builtin(size_t n_bytes, uint64_t seed, tok_data_t *d, err_t *err)
{
    if (n_bytes < 64)
        n_bytes = 64;
    char *text = malloc(n_bytes + 1);
    if (!text)
        return err_set(err, ERR_RUNTIME, "out of memory building the built-in corpus");
    size_t len = 0;
    uint64_t i = 0;
    text[0] = '\0';
    while (len + 1 < n_bytes + 1) {
        uint64_t r = rng_mix(seed, i++);
        unsigned a = (unsigned)(r & 0xffff), b = (unsigned)(r >> 16 & 0xffff),
                 c = (unsigned)(r >> 32 & 0xffff), e = (unsigned)(r >> 48);
        switch (e % 4) {
        case 0: /* subject verb object place. */
            len = put(text, len, n_bytes + 1, PICK(SUBJECTS, a));
            len = put(text, len, n_bytes + 1, " ");
            len = put(text, len, n_bytes + 1, PICK(VERBS, b));
            len = put(text, len, n_bytes + 1, " ");
            len = put(text, len, n_bytes + 1, PICK(OBJECTS, c));
            len = put(text, len, n_bytes + 1, " ");
            len = put(text, len, n_bytes + 1, PICK(PLACES, a + b));
            len = put(text, len, n_bytes + 1, ". ");
            break;
        case 1: /* counting: the same word after "then" each time */
            len = put(text, len, n_bytes + 1, "count ");
            for (unsigned k = 0; k < 3 + b % 5; k++) {
                len = put(text, len, n_bytes + 1, NUMBERS[(a + k) % 10]);
                len = put(text, len, n_bytes + 1, k + 1 < 3 + b % 5 ? " then " : ". ");
            }
            break;
        case 2: /* a question and its fixed answer */
            len = put(text, len, n_bytes + 1, "who ");
            len = put(text, len, n_bytes + 1, PICK(VERBS, c));
            len = put(text, len, n_bytes + 1, " ");
            len = put(text, len, n_bytes + 1, PICK(OBJECTS, c));
            len = put(text, len, n_bytes + 1, "? ");
            len = put(text, len, n_bytes + 1, PICK(SUBJECTS, c));
            len = put(text, len, n_bytes + 1, " does.\n");
            break;
        default:
            len = put(text, len, n_bytes + 1, "if ");
            len = put(text, len, n_bytes + 1, PICK(OBJECTS, a));
            len = put(text, len, n_bytes + 1, " grows, ");
            len = put(text, len, n_bytes + 1, PICK(SUBJECTS, b));
            len = put(text, len, n_bytes + 1, " ");
            len = put(text, len, n_bytes + 1, PICK(VERBS, a));
            len = put(text, len, n_bytes + 1, " it again.\n");
            break;
        }
        if (len + 1 >= n_bytes + 1)
            break;
    }
    int rc = tok_from_text(text, len, "built-in corpus", d, err);
    free(text);
    return rc;
}
