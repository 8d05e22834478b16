#include "sim/dp_contention.h"

double dpc_sm_share(const sim_input_t *in)
{
    int ctas = in->opt.dp_comm_ctas < 0 ? DPC_NCCL_CTAS : in->opt.dp_comm_ctas;
    int sms = in->cluster->gpu.sm_count;
    if (ctas <= 0 || sms <= 0)
        return 0;
    return ctas >= sms ? 1 : (double)ctas / sms;
}

/* Walk both streams from their last task back: their tasks are disjoint
 * intervals in order, so the intersection is a merge. */
double dpc_overlap_s(const sim_engine_t *e, int stream_a, int stream_b)
{
    int a = eng_stream_last(e, stream_a), b = eng_stream_last(e, stream_b);
    double sum = 0;
    while (a >= 0 && b >= 0) {
        double a0 = eng_start(e, a), a1 = eng_end(e, a);
        double b0 = eng_start(e, b), b1 = eng_end(e, b);
        double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
        if (hi > lo)
            sum += hi - lo;
        /* drop the interval that starts later: it can meet nothing earlier */
        if (a0 >= b0)
            a = eng_stream_prev(e, a);
        else
            b = eng_stream_prev(e, b);
    }
    return sum;
}

double dpc_stage_loss_s(const sim_input_t *in, const sim_engine_t *e, int compute_stream,
                        int dp_stream, double hidden_s)
{
    double share = dpc_sm_share(in);
    if (!(share > 0))
        return 0;
    return share * (dpc_overlap_s(e, compute_stream, dp_stream) + hidden_s);
}
