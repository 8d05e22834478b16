/* failure: failure-rate tables (topologies/catalog/failures.json).
 *
 * A rate set is a consistent group of failure classes from one source (the
 * Llama 3 405B interruption table by cause, Meta's RSC research clusters,
 * OPT-175B in a cloud, BLOOM on a public HPC centre, ...). Each class
 * interrupts a job at rate_per_component_hour per wall-clock hour of each
 * component it is counted against (GPU, node, NIC, or the job as a whole),
 * with an exponential or Weibull inter-arrival distribution, a detection
 * time and a repair policy (replace the node from a spare, or reschedule
 * the job). Each class has a kind (hardware, software, network, storage,
 * planned, stability, preemption) so that a published count is compared
 * with what it counts, and names the validation rows it was derived from.
 *
 * A set says its environment (dedicated, research, hpc, cloud, marketplace)
 * and the GPU architectures its evidence covers; failure_choose picks the
 * default set for an environment and a GPU architecture, and says when the
 * choice is an assumption (evidence from another architecture or setting).
 */
#ifndef SCALEPLAN_TOPOLOGIES_FAILURE_H
#define SCALEPLAN_TOPOLOGIES_FAILURE_H

#include <stdbool.h>

#include "common/error.h"
#include "topologies/cluster.h"

typedef enum {
    FAIL_PER_GPU = 0,
    FAIL_PER_NODE,
    FAIL_PER_NIC,
    FAIL_PER_JOB,
    FAIL_COMPONENT_COUNT
} failure_component_t;

typedef enum { REPAIR_REPLACE_NODE = 0, REPAIR_RESCHEDULE = 1 } failure_repair_t;

typedef enum {
    FAIL_KIND_HARDWARE = 0,
    FAIL_KIND_SOFTWARE,
    FAIL_KIND_NETWORK,
    FAIL_KIND_STORAGE,
    FAIL_KIND_PLANNED,
    FAIL_KIND_STABILITY, /* manual and training-stability restarts */
    FAIL_KIND_PREEMPTION,
    FAIL_KIND_UNKNOWN,   /* a fault the source could not attribute */
    FAIL_KIND_COUNT
} failure_kind_t;

#define FAILURE_MAX_CLASSES 24

typedef struct {
    char name[32];
    char description[160];
    failure_component_t component;
    double rate_per_component_hour;
    bool weibull;         /* else exponential */
    double weibull_shape; /* k; 1 = exponential */
    bool unexpected;      /* false for planned maintenance */
    double detect_s;      /* time from failure to the job noticing */
    failure_repair_t repair;
    failure_kind_t kind;
    char category[32];    /* the source's category ("GPU", "Host", "Network", ...) */
    char evidence[64];    /* validation rows it was derived from, comma-separated */
    char copied_from[32]; /* another set it was copied from (an assumption), or "" */
    double count;         /* the published count it was derived from (0 = none) */
    bool hang;            /* a hung collective: found only when the watchdog
                             times out (rel_config_t.watchdog_timeout_s) */
    char source[900];
} failure_class_t;

typedef enum { FAIL_SCOPE_JOB = 0, FAIL_SCOPE_CLUSTER = 1 } failure_scope_t;

/* What a published count covers, each level inside the next: GPU faults,
 * all hardware faults, every unexpected interruption, everything (planned
 * maintenance included). A set's "covers" says the widest level its
 * evidence counts; a record is compared at its own level. */
typedef enum {
    FAIL_LEVEL_GPU = 0,
    FAIL_LEVEL_HARDWARE,
    FAIL_LEVEL_UNEXPECTED,
    FAIL_LEVEL_ALL,
    FAIL_LEVEL_COUNT
} failure_level_t;

const char *failure_level_name(failure_level_t l);

typedef struct {
    char name[32];
    char description[160];
    char environment[24];   /* where the evidence comes from; "any" */
    char architectures[64]; /* GPU architectures of the evidence, comma-separated */
    failure_scope_t scope;  /* interruptions of one job, or tickets of a cluster */
    char counts[200];       /* what the source counts */
    failure_level_t covers; /* the widest level its evidence counts */
    int year;               /* when the evidence was gathered (the era) */
    bool evidence;          /* derived from published counts (false: a
                               planning rule of thumb, never pooled) */
    char source_key[96];    /* phrases of the source's title, '|' between
                               alternatives (validation rows) */
    char source[800];
    int n_classes;
    failure_class_t classes[FAILURE_MAX_CLASSES];
} failure_set_t;

/* Load a rate set by name; NULL or "" loads the catalog's default set (the
 * first choice for the default environment and the hopper architecture). */
int failure_load_set(const char *name, failure_set_t *out, err_t *err);

/* Whether a record's source title names the set's source (any of its
 * source_key phrases, case-insensitive). */
bool failure_set_from(const failure_set_t *s, const char *title);

/* Every rate set in file order; *sets is a heap array the caller frees. */
int failure_load_all(failure_set_t **sets, size_t *count, err_t *err);

const char *failure_kind_name(failure_kind_t k);
/* Whether set s has evidence for GPU architecture arch. */
bool failure_set_covers(const failure_set_t *s, const char *arch);

/* The default set for a job, and why. */
#define FAILURE_MAX_CHAIN 4
typedef struct {
    char environment[24];   /* as used (the catalog's default when none given) */
    bool environment_default; /* no environment was given */
    char chain[FAILURE_MAX_CHAIN][32]; /* candidate sets, best first */
    int n_chain;
    char set[32];           /* chain[0] */
    bool assumed;           /* the set's evidence is for another architecture
                               or environment than the job's */
    char why[240];          /* one line saying how it was chosen */
} failure_choice_t;

/* Choose the default set for environment (NULL or "" = the catalog's
 * default_environment) and GPU architecture arch ("hopper"). An unknown
 * environment is ERR_INPUT naming --environment and listing the known ones. */
int failure_choose(const char *environment, const char *arch, failure_choice_t *out, err_t *err);

/* The environment a published record's text describes (failures.json
 * "environment_keywords": the first rule whose phrase it contains), or ""
 * when none matches (the default environment applies). */
int failure_environment_of(const char *text, char *env, size_t cap, err_t *err);

/* The environments, as "dedicated, research, ..." (for help and errors). */
int failure_environments(char *buf, size_t cap, err_t *err);

/* Components of a kind in a cluster (GPUs, nodes, NICs = nodes x rails, 1). */
double failure_components(const cluster_t *c, failure_component_t comp);

/* Expected interruptions per hour of a job on cluster c from one class. */
double failure_job_rate_per_hour(const failure_class_t *f, const cluster_t *c);

const char *failure_component_name(failure_component_t c);

/* What planning guides quote for interruptions per week at a job size
 * (failures.json "planning_guides"), to print beside a prediction. */
#define FAILURE_MAX_GUIDES 8

typedef struct {
    int gpus;
    char per_week[24]; /* as quoted: "under 1", "1-2" */
} failure_guide_t;

typedef struct {
    int n;
    failure_guide_t rows[FAILURE_MAX_GUIDES]; /* by GPU count, as listed */
    char source[400];
} failure_guides_t;

/* Load the quotes; errors name the file and key. */
int failure_load_guides(failure_guides_t *out, err_t *err);

/* Infant mortality (failures.json "burn_in"): a cluster of age a fails at
 * the mature rate times 1 + (initial_multiple - 1) x exp(-a / time
 * constant). The published early and late windows it was derived from are
 * kept so that a test can reproduce their ratio. */
typedef struct {
    double initial_multiple;   /* m(0) >= 1 */
    double time_constant_s;    /* > 0 */
    double early_from_s, early_to_s; /* the evidence's early window (cluster age) */
    double late_from_s, late_to_s;   /* ... and its late window */
    double published_ratio;    /* early rate / late rate as published */
    char source[1200];
} failure_burnin_t;

/* Load "burn_in"; errors name the file and key. */
int failure_load_burnin(failure_burnin_t *out, err_t *err);

/* The rate multiple at cluster age age_s (>= 0). */
double failure_burnin_multiple(const failure_burnin_t *b, double age_s);

/* The mean multiple over cluster ages [from_s, to_s] (from_s < to_s). */
double failure_burnin_mean(const failure_burnin_t *b, double from_s, double to_s);

/* The extra failure-clock time a cluster of age age_s accrues by wall time
 * t_s after it: integral of (m - 1) over [age, age + t]. The clock's time
 * is t_s + this; it is increasing in t_s. */
double failure_burnin_extra_s(const failure_burnin_t *b, double age_s, double t_s);

#endif
