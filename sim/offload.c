#include "sim/offload.h"

#include <math.h>
#include <string.h>

#include "common/units.h"

/* Share of the host link's rate that pinned-memory copies reach. An
 * assumption (PCIe payload overheads and DMA efficiency typically leave
 * 75-90% of the 128b/130b line rate), said in offload_notes. */
#define LINK_EFFICIENCY 0.8

/* DeepSpeed's CPU Adam: the ZeRO-Offload paper (Ren et al., USENIX ATC
 * 2021, Table 3) reports it updating 1 billion parameters in about 0.22 s
 * and 10 billion in about 2.6 s on a DGX-2 host (two 24-core Xeon Platinum
 * 8168), 5-7x PyTorch's CPU Adam (the DeepSpeed ZeRO-Offload tutorial says
 * "5X-7X"): about 4e9 parameters per second on 48 cores. Figures as
 * recalled from the paper; scaled per core here, said in offload_notes. */
#define CPU_ADAM_PARAMS_PER_CORE_S (4.0e9 / 48)

void offload_env(const cluster_t *c, const layout_t *l, offload_env_t *e)
{
    double per_node = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
    e->link_gbs = c->gpu.host_link_gbs * LINK_EFFICIENCY;
    e->store_gbs = e->link_gbs;
    if (l->offload_nvme && c->nvme_gbs_per_node / per_node < e->store_gbs)
        e->store_gbs = c->nvme_gbs_per_node / per_node;
    e->cpu_params_per_s = CPU_ADAM_PARAMS_PER_CORE_S * c->host_cpu_cores / per_node;
    e->host_gib = c->host_memory_gib / per_node;
}

void offload_costs(const model_t *m, const layout_t *l, const cluster_t *c,
                   double layer_params_gpu, double stage_params_gpu, double layer_act_bytes,
                   offload_costs_t *out)
{
    memset(out, 0, sizeof *out);
    out->step_gpu_share = 1;
    if (!l->offload)
        return;
    offload_env_t env;
    offload_env(c, l, &env);
    double w = layout_weight_bytes(l->precision), shard = (double)l->dp * l->cp;
    double store = env.store_gbs * 1e9, link = env.link_gbs * 1e9;
    if (l->offload & LAYOUT_OFFLOAD_PARAMS) {
        /* ZeRO-3: each GPU fetches its shard of the layer, then all-gathers. */
        out->layer_params = layer_params_gpu / shard;
        out->param_fetch_s = out->layer_params * w / store;
        out->grad_store_s = out->layer_params * l->grad_bytes / store;
    }
    if (l->offload & LAYOUT_OFFLOAD_OPTIMIZER) {
        bool sharded = l->zero >= 1 || l->distributed_optimizer;
        double owned = stage_params_gpu / (sharded ? shard : 1);
        double share = l->offload_fraction > 0 ? l->offload_fraction : 1;
        double updated = owned * share;
        out->step_gpu_share = 1 - share;
        /* Gradients out (unless the parameter offload already stored them
         * layer by layer), fp32 master/moments through NVMe when there. */
        if (!(l->offload & LAYOUT_OFFLOAD_PARAMS))
            out->step_grad_s = updated * l->grad_bytes / link;
        out->step_cpu_s = updated / env.cpu_params_per_s;
        if (l->offload_nvme) /* read and write 16 B per parameter of state */
            out->step_cpu_s += 2 * 16 * updated / (env.store_gbs * 1e9);
        /* Updated 16-bit parameters back, unless they live on the host. */
        if (!(l->offload & LAYOUT_OFFLOAD_PARAMS))
            out->step_param_s = updated * w / link;
    }
    int layers = 0;
    for (int s = 0; s < l->pp; s++) {
        int n = layout_stage_layers(l, m, s);
        if (n > layers)
            layers = n;
    }
    int act = layout_offload_act_layers(l, layers);
    if (act > 0) {
        out->act_layer_s = layer_act_bytes / link;
        out->act_share = (double)act / layers;
    }
}

void offload_layer_exposed(const offload_costs_t *o, double fwd_compute_s, double bwd_compute_s,
                           double dp_fwd_s, double dp_bwd_s, double *fwd_s, double *bwd_s)
{
    /* Parameters: fetched one layer ahead, in the window the layer's
     * compute gives; the ZeRO-3 gathers already take part of it (their
     * exposed part is in dp_*). Gradients go back during the backward. */
    double fwd_window = fmax(0, fwd_compute_s - dp_fwd_s);
    double bwd_window = fmax(0, bwd_compute_s - dp_bwd_s);
    double f = fmax(0, o->param_fetch_s - fwd_window);
    double b = fmax(0, o->param_fetch_s + o->grad_store_s - bwd_window);
    /* Activations: out after the forward, back before the backward, one
     * block at a time behind the next block's compute; only the offloaded
     * share of the blocks pays. */
    f += o->act_share * fmax(0, o->act_layer_s - fwd_compute_s);
    b += o->act_share * fmax(0, o->act_layer_s - bwd_compute_s);
    *fwd_s = f;
    *bwd_s = b;
}

bool offload_host_fits(const model_memory_t *mem, const cluster_t *c, const layout_t *l,
                       double *need_gib, double *have_gib)
{
    offload_env_t env;
    offload_env(c, l, &env);
    *need_gib = mem->host_bytes / GIB;
    *have_gib = env.host_gib;
    return *need_gib <= *have_gib;
}

bool offload_default_recompute(layout_t *l, notes_t *notes)
{
    if (l->recompute != RECOMPUTE_NONE ||
        !(l->offload & (LAYOUT_OFFLOAD_OPTIMIZER | LAYOUT_OFFLOAD_PARAMS)))
        return false;
    l->recompute = RECOMPUTE_FULL;
    if (notes)
        notes_add(notes, NOTE_ASSUMED, "--recompute",
                  "full with --offload, as offloading runs are launched (DeepSpeed "
                  "ZeRO-Offload/Infinity); --recompute none to keep every activation");
    return true;
}

void offload_notes(const layout_t *l, const cluster_t *c, notes_t *notes)
{
    if (!l->offload)
        return;
    offload_env_t env;
    offload_env(c, l, &env);
    notes_add(notes, NOTE_ASSUMED, "offload.host_link",
              "%.0f%% of %s's %.1f GB/s per direction to the host (%.1f GB/s effective)",
              100 * LINK_EFFICIENCY, c->gpu.name, c->gpu.host_link_gbs, env.link_gbs);
    if (l->offload & LAYOUT_OFFLOAD_OPTIMIZER)
        notes_add(notes, NOTE_ASSUMED, "offload.cpu_adam",
                  "CPU Adam at %.2g parameters/s per GPU (ZeRO-Offload's DeepSpeed CPU Adam, "
                  "about 4e9/s on 48 cores, scaled to %d cores shared by %d GPUs)",
                  env.cpu_params_per_s, c->host_cpu_cores, c->gpus_per_node);
    if (l->offload_nvme)
        notes_add(notes, NOTE_ASSUMED, "offload.nvme",
                  "%.1f GB/s of NVMe per GPU (%.0f GB/s per node of %s)",
                  c->nvme_gbs_per_node / c->gpus_per_node, c->nvme_gbs_per_node, c->name);
    if (c->host_assumed)
        notes_add(notes, NOTE_ASSUMED, "cluster.host",
                  "%s gives no host figures: %.0f GiB memory, %d cores, %.0f GB/s NVMe per "
                  "node assumed",
                  c->name, c->host_memory_gib, c->host_cpu_cores, c->nvme_gbs_per_node);
}

void offload_step_totals(const offload_costs_t *o, const cluster_t *c, const layout_t *l,
                         double layers, int m, double *s, double *gb)
{
    offload_env_t env;
    offload_env(c, l, &env);
    double per_mb = layers * (2 * o->param_fetch_s + o->grad_store_s) +
                    2 * o->act_share * layers * o->act_layer_s;
    *s = m * per_mb + o->step_grad_s + o->step_param_s;
    *gb = *s * env.link_gbs;
}
