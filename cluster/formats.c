#include "cluster/formats.h"

#include <string.h>

#include "cluster/traces.h"

static const cjobs_format_t formats[] = {
    {"jobs", "CSV: name,gpus,submit_s,duration_s (or model,tokens)[,priority,preemptible]",
     cjobs_read_jobs},
    {"tiresias", "the Tiresias simulator's job CSV (job_id,num_gpu,submit_time,...,duration)",
     cjobs_read_tiresias},
    {"muri", "Muri's simulator trace (Rivendile/Muri; SIGCOMM'22): tiresias's columns, in ms",
     cjobs_read_muri},
    /* the public cluster traces: cluster/traces.h */
    {"helios", "SenseTime Helios cluster_log.csv (HeliosData; Hu et al. SC'21)",
     ctrace_read_helios},
    {"acme", "Shanghai AI Lab Acme trace_seren/kalos.csv (AcmeTrace; Hu et al. NSDI'24)",
     ctrace_read_acme},
    {"philly", "Microsoft Philly cluster_job_log JSON (philly-traces; Jeon et al. ATC'19)",
     ctrace_read_philly},
    {"pai", "Alibaba PAI pai_task_table.csv, headerless (clusterdata gpu-v2020; NSDI'22)",
     ctrace_read_pai},
    {"openb", "Alibaba GPU-sharing openb_pod_list_*.csv (clusterdata gpu-v2023; ATC'23)",
     ctrace_read_openb},
};

const cjobs_format_t *cjobs_formats(int *n_out)
{
    *n_out = (int)(sizeof formats / sizeof formats[0]);
    return formats;
}

const cjobs_format_t *cjobs_format_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    return NULL;
}

int cjobs_read(const cjobs_format_t *fmt, const char *path, cjobs_t *out, err_t *err)
{
    return fmt->read(path, out, err);
}
