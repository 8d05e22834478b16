#include "cluster/heap.h"

#include <stdlib.h>

void cheap_init(cheap_t *h)
{
    h->a = NULL;
    h->n = h->cap = 0;
    h->next_seq = 0;
}

void cheap_free(cheap_t *h)
{
    free(h->a);
    cheap_init(h);
}

bool cheap_before(const cheap_item_t *x, const cheap_item_t *y)
{
    if (x->k1 != y->k1)
        return x->k1 < y->k1;
    if (x->k2 != y->k2)
        return x->k2 < y->k2;
    if (x->k3 != y->k3)
        return x->k3 < y->k3;
    return x->seq < y->seq;
}

int cheap_push(cheap_t *h, cheap_item_t it, err_t *err)
{
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 256;
        cheap_item_t *g = realloc(h->a, (size_t)cap * sizeof *g);
        if (!g)
            return err_set(err, ERR_RUNTIME, "out of memory: event queue of %d items", h->n);
        h->a = g;
        h->cap = cap;
    }
    it.seq = h->next_seq++;
    int i = h->n++;
    while (i > 0) { /* sift up */
        int parent = (i - 1) / 2;
        if (!cheap_before(&it, &h->a[parent]))
            break;
        h->a[i] = h->a[parent];
        i = parent;
    }
    h->a[i] = it;
    return ERR_OK;
}

bool cheap_peek(const cheap_t *h, cheap_item_t *out)
{
    if (h->n == 0)
        return false;
    *out = h->a[0];
    return true;
}

/* Sift h->a[i]'s item down to its place. */
static void sift_down(cheap_t *h, int i)
{
    cheap_item_t it = h->a[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && cheap_before(&h->a[c + 1], &h->a[c]))
            c++;
        if (!cheap_before(&h->a[c], &it))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    h->a[i] = it;
}

bool cheap_pop(cheap_t *h, cheap_item_t *out)
{
    if (h->n == 0)
        return false;
    *out = h->a[0];
    h->a[0] = h->a[--h->n];
    if (h->n > 0)
        sift_down(h, 0);
    return true;
}

void cheap_heapify(cheap_t *h)
{
    for (int i = h->n / 2 - 1; i >= 0; i--)
        sift_down(h, i);
}
