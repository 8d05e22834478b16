#include "reports/jsonout.h"

#include "common/json.h"
#include "common/units.h"

cJSON *report_memory_json(const model_memory_t *mem, double capacity_gib)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && json_add_number(o, "params", mem->params_bytes / GIB) &&
              json_add_number(o, "grads", mem->grads_bytes / GIB) &&
              json_add_number(o, "optimizer", mem->optimizer_bytes / GIB) &&
              json_add_number(o, "activations", mem->activations_bytes / GIB) &&
              json_add_number(o, "buffers", mem->buffers_bytes / GIB) &&
              json_add_number(o, "total", mem->total_bytes / GIB);
    if (ok && capacity_gib >= 0)
        ok = json_add_number(o, "capacity", capacity_gib);
    if (ok && mem->host_bytes > 0)
        ok = json_add_number(o, "host", mem->host_bytes / GIB);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *report_model_json(const model_t *m)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && cJSON_AddStringToObject(o, "name", m->name) &&
              cJSON_AddStringToObject(o, "display_name", m->display) &&
              cJSON_AddStringToObject(o, "family", model_family_name(m->family)) &&
              json_add_number(o, "layers", m->n_layers) &&
              json_add_number(o, "hidden", m->hidden) &&
              json_add_number(o, "heads", m->n_heads) &&
              json_add_number(o, "kv_heads", m->n_kv_heads) &&
              json_add_number(o, "head_dim", m->head_dim) &&
              json_add_number(o, "ffn", m->ffn) && json_add_number(o, "vocab", m->vocab) &&
              json_add_number(o, "max_seq", m->max_seq) &&
              cJSON_AddBoolToObject(o, "tied_embeddings", m->tied_embeddings) &&
              cJSON_AddStringToObject(o, "source", m->source);
    if (ok && model_has_full_attn(m)) {
        /* Gemma 4's full-attention blocks in their own shape */
        cJSON *g = cJSON_AddObjectToObject(o, "full_attention_blocks");
        ok = g && json_add_number(g, "blocks", m->n_layers - m->window_layers) &&
             json_add_number(g, "heads", m->full_attn.n_heads) &&
             json_add_number(g, "head_dim", m->full_attn.head_dim) &&
             json_add_number(g, "kv_heads", m->full_attn.n_kv_heads) &&
             cJSON_AddBoolToObject(g, "keys_are_values", m->full_attn.k_eq_v);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *report_notes_json(const notes_t *notes)
{
    cJSON *a = cJSON_CreateArray();
    bool ok = a != NULL;
    for (size_t i = 0; ok && notes && i < notes->n; i++) {
        const note_t *n = &notes->items[i];
        cJSON *o = cJSON_CreateObject();
        ok = o && cJSON_AddItemToArray(a, o) &&
             cJSON_AddStringToObject(o, "kind", notes_kind_name(n->kind)) &&
             cJSON_AddStringToObject(o, "field", n->field) &&
             cJSON_AddStringToObject(o, "note", n->text);
    }
    if (!ok) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

cJSON *report_timeline_json(const sim_event_t *events, int n)
{
    cJSON *a = cJSON_CreateArray();
    bool ok = a != NULL;
    for (int i = 0; ok && i < n; i++) {
        const sim_event_t *e = &events[i];
        cJSON *o = cJSON_CreateObject();
        ok = o && cJSON_AddItemToArray(a, o) && json_add_number(o, "stage", e->stage) &&
             json_add_number(o, "stream", e->stream) &&
             cJSON_AddStringToObject(o, "kind", sim_task_kind_name(e->kind)) &&
             json_add_number(o, "mb", e->mb) && json_add_number(o, "chunk", e->chunk) &&
             json_add_number(o, "start_s", e->start_s) && json_add_number(o, "end_s", e->end_s);
    }
    if (!ok) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

cJSON *report_sweep_json(const double *interval_s, const double *goodput, int n)
{
    cJSON *a = cJSON_CreateArray();
    bool ok = a != NULL;
    for (int i = 0; ok && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        ok = o && cJSON_AddItemToArray(a, o) && json_add_number(o, "interval_s", interval_s[i]) &&
             json_add_number(o, "goodput", goodput[i]);
    }
    if (!ok) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

bool report_add_schema(cJSON *doc)
{
    if (!cJSON_IsObject(doc) || cJSON_GetObjectItemCaseSensitive(doc, "schema_version"))
        return true;
    return json_add_number(doc, "schema_version", REPORT_SCHEMA_VERSION);
}
