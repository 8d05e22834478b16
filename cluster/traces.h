/* traces: readers for the public GPU-cluster traces, rows of the
 * cjobs_formats table (cluster/formats.h).
 *
 *   helios  SenseTime Helios, S-Lab-System-Group/HeliosData, cluster_log.csv
 *           (Hu et al., SC 2021): job_id,user,vc,gpu_num,cpu_num,node_num,
 *           state,submit_time,start_time,end_time,duration,queue; times
 *           "YYYY-MM-DD HH:MM:SS", duration in seconds.
 *   acme    Shanghai AI Lab Acme, InternLM/AcmeTrace, trace_seren.csv and
 *           trace_kalos.csv (Hu et al., NSDI 2024): the same columns as
 *           Helios without vc (Kalos adds some); times carry a UTC offset
 *           ("2023-03-01 00:18:22+08:00").
 *   philly  Microsoft Philly, msr-fiddle/philly-traces, cluster_job_log
 *           (Jeon et al., ATC 2019): a JSON array of jobs, each with
 *           jobid, submitted_time and attempts[{start_time, end_time,
 *           detail[{ip, gpus[]}]}]. GPUs: the most any attempt held; run
 *           time: the attempts' sum; recorded start: the first attempt's.
 *           Errors name the record's line and index ("line 3: [1].
 *           attempts[0].end_time"); files over common/fileio.h's read limit
 *           (256 MiB) are refused.
 *   pai     Alibaba PAI, alibaba/clusterdata cluster-trace-gpu-v2020,
 *           pai_task_table.csv (Weng et al., NSDI 2022), headerless:
 *           job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,
 *           plan_mem,plan_gpu,gpu_type; a job is its tasks (ps, worker, ...):
 *           GPUs = sum of inst_num x plan_gpu / 100 rounded up (PAI asks for
 *           fractions of a GPU; the replay gives whole ones), run time from
 *           its first task start to its last task end. The task table holds
 *           no submission time, so submit = first task start and the trace
 *           has no queue delay of its own to compare with.
 *   openb   Alibaba's GPU-sharing cluster, alibaba/clusterdata
 *           cluster-trace-gpu-v2023, openb_pod_list_*.csv (Weng et al., ATC
 *           2023): name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,
 *           pod_phase,creation_time,deletion_time,scheduled_time, times in
 *           seconds; submit = creation, recorded start = scheduled, run
 *           time = deletion - scheduled (a pod still running when the trace
 *           ends is deleted at its end); a pod sharing a GPU (gpu_milli
 *           below 1000) is given the whole GPU; gpu_spec (GPU types) is not
 *           read, and a pod never scheduled is not replayed.
 *
 * Every reader: jobs that asked for no GPU (CPU jobs) and jobs that never
 * ran (no start or end, zero run time) are not replayed and are counted in
 * cjobs_t.skipped; times are moved so the first submission is at 0 (the
 * recorded starts, cjob_t.trace_start_ms, move with them). A malformed
 * record is ERR_INPUT naming the file, the line (the record for philly)
 * and the field; a last line cut short (no newline, fields missing) or a
 * JSON document that ends early is refused as cut short, never replayed
 * as a shorter trace. A CSV cut exactly at a line end cannot be told
 * from a whole one (the formats carry no count): a "# jobs: N" first line,
 * as the jobs format allows, is checked for helios and acme.
 */
#ifndef SCALEPLAN_CLUSTER_TRACES_H
#define SCALEPLAN_CLUSTER_TRACES_H

#include "cluster/jobs.h"
#include "common/error.h"

/* The readers (cjobs_format_t.read): out initialised here, freed on error. */
int ctrace_read_helios(const char *path, cjobs_t *out, err_t *err);
int ctrace_read_acme(const char *path, cjobs_t *out, err_t *err);
int ctrace_read_philly(const char *path, cjobs_t *out, err_t *err);
int ctrace_read_pai(const char *path, cjobs_t *out, err_t *err);
int ctrace_read_openb(const char *path, cjobs_t *out, err_t *err);

/* A time "YYYY-MM-DD HH:MM:SS" with an optional fraction and an optional
 * "+HH:MM", "-HH:MM" or "Z" as milliseconds since 1970-01-01 UTC (no zone:
 * read as UTC; only differences matter). -1 on a malformed text. */
int ctrace_parse_time_ms(const char *text, int64_t *out_ms);

/* What the trace itself recorded, for the jobs that give a start. */
typedef struct {
    int n;                       /* jobs with a recorded start */
    double queue_delay_mean_s;   /* mean of start - submit */
    double utilization;          /* GPUs x run time over pool_gpus x (last
                                    recorded end - first submit) */
} ctrace_recorded_t;

/* The recorded figures of l on a pool of pool_gpus (n = 0 when no job
 * records a start; then the rest is 0). */
void ctrace_recorded(const cjobs_t *l, int pool_gpus, ctrace_recorded_t *out);

/* Virtual clusters and their GPUs, from Helios's cluster_gpu_number.csv
 * (date,<vc>...,total; one row a day, S-Lab-System-Group/HeliosData). */
#define CTRACE_MAX_VCS 64
typedef struct {
    int n;
    char name[CTRACE_MAX_VCS][32];
    int gpus[CTRACE_MAX_VCS];      /* on the date asked for, or the most over the rows */
} ctrace_vcs_t;

/* Read path: each VC's GPUs on date ("2020-09-01"), or with date NULL the
 * most it had on any row (a VC's quota changes over the months). ERR_INPUT
 * naming file, line and field for a malformed row, a header that is not
 * date,<vc>..., or a date the file lacks. */
int ctrace_read_vc_gpus(const char *path, const char *date, ctrace_vcs_t *out, err_t *err);

#endif
