/* megatron_shell: the commands of a launch script, read as bash would run
 * them as far as the text decides (megatron_shellInt.h): assignments,
 * if / elif / else on string tests, loops read once, case, heredocs given
 * to sbatch or bash, bash -c and eval, and the launch command whose words
 * after the Python script are Megatron's flags. */
#include "inputs/megatron_shellInt.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NAME=value words at the start of a command: record them; returns how
 * many words they took. */
static int assignments(shell_t *sh, const words_t *cmd, int from)
{
    int i = from;
    for (; i < cmd->n; i++) {
        const char *w = cmd->w[i];
        const char *eq = strchr(w, '=');
        if (!eq || eq == w)
            break;
        bool append = eq > w + 1 && eq[-1] == '+';
        const char *name_end = append ? eq - 1 : eq;
        bool ok = name_end > w;
        for (const char *p = w; p < name_end; p++)
            ok = ok && msh_name_char(*p, p == w);
        if (!ok)
            break;
        shvar_t *old = append ? msh_var_find(sh, w, (size_t)(name_end - w)) : NULL;
        if (old && old->value.n == 1) {
            /* NAME+=value on a scalar: the texts joined */
            size_t a = strlen(old->value.w[0]), b = strlen(eq + 1);
            if (msh_charge(sh, a + b))
                return -1;
            char *joined = malloc(a + b + 1);
            if (!joined)
                return sh->oom = 1, -1;
            memcpy(joined, old->value.w[0], a);
            memcpy(joined + a, eq + 1, b + 1);
            free(old->value.w[0]);
            old->value.w[0] = joined;
            continue;
        }
        if (old) {
            /* NAME+=value on an array: one more item */
            if (msh_words_push(sh, &old->value, eq + 1, strlen(eq + 1)))
                return -1;
            continue;
        }
        shvar_t *v = msh_var_set(sh, w, (size_t)(name_end - w));
        if (!v || msh_words_push(sh, &v->value, eq + 1, strlen(eq + 1)))
            return -1;
    }
    return i - from;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* torchrun / python -m torch.distributed.run options before the script:
 * --nproc_per_node N and --nnodes N give the world size. */
static int read_launcher(shell_t *sh, const words_t *cmd, int script)
{
    megatron_args_t *a = sh->a;
    for (int i = 0; i < script; i++) {
        const char *w = cmd->w[i], *slash = strrchr(w, '/');
        if (strcmp(slash ? slash + 1 : w, "torchrun") == 0 ||
            strcmp(w, "torch.distributed.run") == 0 || strcmp(w, "torch.distributed.launch") == 0)
            a->nproc_per_node = 1; /* torchrun's default, unless given below */
    }
    for (int i = 0; i < script; i++) {
        const char *w = cmd->w[i];
        const char *eq = strchr(w, '=');
        size_t len = eq ? (size_t)(eq - w) : strlen(w);
        int *dst = NULL;
        if ((len == 16 && strncmp(w, "--nproc_per_node", len) == 0) ||
            (len == 16 && strncmp(w, "--nproc-per-node", len) == 0))
            dst = &a->nproc_per_node;
        else if (len == 8 && strncmp(w, "--nnodes", len) == 0)
            dst = &a->nnodes;
        if (!dst)
            continue;
        const char *v = eq ? eq + 1 : (i + 1 < script ? cmd->w[++i] : "");
        long x;
        if (!megatron_parse_long(v, &x) || x < 1 || x > (1 << 24)) {
            notes_add(&a->notes, NOTE_IGNORED, w,
                      "launcher value '%s' is not a fixed count; give --gpus", v);
            continue;
        }
        *dst = (int)x;
    }
    return 0;
}

static int run_text(shell_t *sh, const char *text, size_t len);

static const char *base_name(const char *w)
{
    const char *slash = strrchr(w, '/');
    return slash ? slash + 1 : w;
}

/* bash -c TEXT / sh -c TEXT anywhere in the command (srun ... bash -x -c
 * "..."): the index of TEXT, or -1. */
static int shell_c_text(const words_t *cmd, int first)
{
    for (int i = first; i < cmd->n; i++) {
        const char *b = base_name(cmd->w[i]);
        if (strcmp(b, "bash") != 0 && strcmp(b, "sh") != 0 && strcmp(b, "zsh") != 0)
            continue;
        for (int j = i + 1; j < cmd->n && cmd->w[j][0] == '-'; j++)
            if (cmd->w[j][1] != '-' && strchr(cmd->w[j], 'c'))
                return j + 1 < cmd->n ? j + 1 : -1;
        return -1;
    }
    return -1;
}

/* The words of a command joined with blanks, as eval reads them. */
static char *join_words(shell_t *sh, const words_t *cmd, int from)
{
    size_t n = 1;
    for (int i = from; i < cmd->n; i++)
        n += strlen(cmd->w[i]) + 1;
    char *t = malloc(n);
    if (!t)
        return sh->oom = 1, NULL;
    t[0] = '\0';
    for (int i = from; i < cmd->n; i++) {
        if (i > from)
            strcat(t, " ");
        strcat(t, cmd->w[i]);
    }
    return t;
}

/* read [-r] A B ... <<< WORD: WORD split at IFS (blanks, or the IFS the
 * text set) into the names. */
static int read_herestring(shell_t *sh, const words_t *cmd, int first)
{
    shvar_t *ifs = msh_var_find(sh, "IFS", 3);
    const char *sep = ifs && ifs->value.n == 1 && ifs->value.w[0][0] ? ifs->value.w[0] : " \t\n";
    const char *p = sh->herestring;
    int names = first + 1;
    while (names < cmd->n && cmd->w[names][0] == '-')
        names++;
    for (int i = names; i < cmd->n; i++) {
        const char *name = cmd->w[i];
        bool ok = msh_name_char(name[0], true);
        for (const char *q = name; ok && *q; q++)
            ok = msh_name_char(*q, q == name);
        if (!ok)
            continue;
        size_t n = i == cmd->n - 1 ? strlen(p) : strcspn(p, sep);
        shvar_t *v = msh_var_set(sh, name, strlen(name));
        if (!v || msh_words_push(sh, &v->value, p, n))
            return -1;
        p += n;
        if (*p)
            p++;
    }
    return 0;
}

/* Decide what one command is: assignments, the training command (words
 * after a Python script), pasted flags, a text to read as a script (a
 * heredoc given to sbatch or bash, bash -c TEXT, eval), or something
 * else. */
static int take_command(shell_t *sh, int start)
{
    words_t *cmd = &sh->cmd;
    int skip = start;
    if (cmd->n > start && (strcmp(cmd->w[start], "export") == 0 ||
                           strcmp(cmd->w[start], "local") == 0 ||
                           strcmp(cmd->w[start], "declare") == 0 ||
                           strcmp(cmd->w[start], "readonly") == 0)) {
        skip = start + 1;
        while (skip < cmd->n && cmd->w[skip][0] == '-' && cmd->w[skip][1] != '-')
            skip++; /* declare -a, export -n */
    }
    int k = assignments(sh, cmd, skip);
    if (k < 0)
        return -1;
    for (int i = skip; i < skip + k; i++) {
        const char *w = cmd->w[i];
        if (skip || cmd->n > skip + k)
            notes_add(&sh->a->notes, NOTE_IGNORED, w,
                      "environment variable: its effect is not modeled");
    }
    int first = skip + k;
    if (first >= cmd->n)
        return 0;
    const char *verb = base_name(cmd->w[first]);
    /* ':' and true only expand their words (: "${TP:=8}") */
    if (strcmp(verb, ":") == 0 || strcmp(verb, "true") == 0)
        return 0;
    if (strcmp(verb, "unset") == 0) {
        for (int i = first + 1; i < cmd->n; i++) {
            shvar_t *v = msh_var_find(sh, cmd->w[i], strlen(cmd->w[i]));
            if (v) {
                msh_words_free(&v->value);
                int at = (int)(v - sh->vars);
                sh->vars[at] = sh->vars[--sh->n_vars];
            }
        }
        return 0;
    }
    if (strcmp(verb, "read") == 0 && sh->herestring)
        return read_herestring(sh, cmd, first);
    /* a heredoc given to a batch system or a shell is the launch script */
    if (sh->heredoc) {
        char *body = sh->heredoc;
        sh->heredoc = NULL;
        int rc = 0;
        if (strcmp(verb, "sbatch") == 0 || strcmp(verb, "bash") == 0 ||
            strcmp(verb, "sh") == 0 || strcmp(verb, "zsh") == 0 || strcmp(verb, "srun") == 0 ||
            strcmp(verb, "salloc") == 0 || strcmp(verb, "qsub") == 0) {
            rc = run_text(sh, body, strlen(body));
            free(body);
            return rc;
        }
        notes_add(&sh->a->notes, NOTE_IGNORED, cmd->w[first],
                  "line %d: a heredoc given to %s, not a shell: its text is not read", sh->line,
                  verb);
        free(body);
    }
    if (strcmp(verb, "eval") == 0) {
        char *t = join_words(sh, cmd, first + 1);
        int rc = t ? run_text(sh, t, strlen(t)) : -1;
        free(t);
        return rc;
    }
    int c = shell_c_text(cmd, first);
    if (c >= 0) {
        char *t = strdup(cmd->w[c]);
        if (!t)
            return sh->oom = 1, -1;
        int rc = run_text(sh, t, strlen(t));
        free(t);
        return rc;
    }
    if (strcmp(verb, "source") == 0 || strcmp(verb, ".") == 0) {
        notes_add(&sh->a->notes, NOTE_IGNORED, cmd->w[first],
                  "line %d: %s is not read (only this text is); the flags it would set go "
                  "in the text or on scaleplan's command line",
                  sh->line, first + 1 < cmd->n ? cmd->w[first + 1] : "the sourced file");
        return 0;
    }
    int script = -1;
    for (int i = first; i < cmd->n; i++)
        if (ends_with(cmd->w[i], ".py")) {
            script = i;
            break;
        }
    words_t *dst = &sh->chosen;
    if (script >= 0) {
        /* The last script command wins: launch scripts sometimes echo the
         * command first. */
        msh_words_free(dst);
        sh->chose_script = true;
        snprintf(sh->a->script, sizeof sh->a->script, "%s", base_name(cmd->w[script]));
        /* "python script.py" with no launcher around it: one process */
        sh->single = sh->depth == 0;
        for (int i = first; i < script; i++) {
            const char *b = base_name(cmd->w[i]);
            if (!(strncmp(b, "python", 6) == 0 || (cmd->w[i][0] == '-' && strcmp(b, "-m") != 0)))
                sh->single = false;
        }
        if (read_launcher(sh, cmd, script))
            return -1;
        for (int i = sh->collect ? script : script + 1; i < cmd->n; i++)
            if (msh_words_push(sh, dst, cmd->w[i], strlen(cmd->w[i])))
                return -1;
        return 0;
    }
    if (megatron_is_flag_word(cmd->w[first]) && !sh->chose_script) {
        for (int i = first; i < cmd->n; i++)
            if (msh_words_push(sh, dst, cmd->w[i], strlen(cmd->w[i])))
                return -1;
        return 0;
    }
    notes_add(&sh->a->notes, NOTE_IGNORED, cmd->w[first],
              "a shell command other than the training command");
    return 0;
}

/* Whether a word still holds something the text does not give (a
 * variable set outside it, a positional parameter, a command's output). */
static bool undecided_word(const char *w)
{
    return strchr(w, '$') != NULL || strchr(w, '`') != NULL;
}

/* One test of a condition, cmd->w[from..n): [[ A == B ]], [ A != B ],
 * [[ -z A ]], [[ -n A ]], [[ A ]], numeric -eq/-ne/-lt/-le/-gt/-ge, true,
 * false, each optionally negated by !: 1 true, 0 false, -1 when the text
 * cannot decide it (another test, an unexpanded value, a glob pattern). */
static int eval_test(const words_t *cmd, int from)
{
    char *const *w = cmd->w;
    int i = from, n = cmd->n;
    bool neg = false;
    if (i < n && strcmp(w[i], "!") == 0) {
        neg = true;
        i++;
    }
    if (i == n - 1 && (strcmp(w[i], "true") == 0 || strcmp(w[i], ":") == 0))
        return !neg;
    if (i == n - 1 && strcmp(w[i], "false") == 0)
        return neg;
    const char *close = i < n && strcmp(w[i], "[[") == 0 ? "]]"
                        : i < n && strcmp(w[i], "[") == 0 ? "]"
                                                          : NULL;
    if (!close || n - i < 2 || strcmp(w[n - 1], close) != 0)
        return -1;
    int a = i + 1, b = n - 1;
    if (a < b && strcmp(w[a], "!") == 0) {
        neg = !neg;
        a++;
    }
    for (int k = a; k < b; k++)
        if (undecided_word(w[k]))
            return -1;
    int r = -1;
    if (b - a == 1) {
        r = w[a][0] != '\0';
    } else if (b - a == 2 && strcmp(w[a], "-z") == 0) {
        r = w[a + 1][0] == '\0';
    } else if (b - a == 2 && strcmp(w[a], "-n") == 0) {
        r = w[a + 1][0] != '\0';
    } else if (b - a == 3) {
        const char *x = w[a], *op = w[a + 1], *y = w[a + 2];
        bool glob = strcmp(close, "]]") == 0 && strpbrk(y, "*?[") != NULL;
        long u, v;
        if ((strcmp(op, "==") == 0 || strcmp(op, "=") == 0) && !glob)
            r = strcmp(x, y) == 0;
        else if (strcmp(op, "!=") == 0 && !glob)
            r = strcmp(x, y) != 0;
        else if (op[0] == '-' && megatron_parse_long(x, &u) && megatron_parse_long(y, &v)) {
            r = strcmp(op, "-eq") == 0   ? u == v
                : strcmp(op, "-ne") == 0 ? u != v
                : strcmp(op, "-lt") == 0 ? u < v
                : strcmp(op, "-le") == 0 ? u <= v
                : strcmp(op, "-gt") == 0 ? u > v
                : strcmp(op, "-ge") == 0 ? u >= v
                                         : -1;
        }
    }
    return r < 0 ? -1 : neg ? !r : r;
}

/* a || b and a && b over true (1), false (0) and undecided (-1). */
static int join_tests(int a, const char *op, int b)
{
    if (strcmp(op, "&&") == 0)
        return a == 0 || b == 0 ? 0 : a == 1 && b == 1 ? 1 : -1;
    return a == 1 || b == 1 ? 1 : a == 0 && b == 0 ? 0 : -1;
}

/* (megatron_shellInt.h) */
bool msh_active(const shell_t *sh)
{
    if (sh->n_ifs == 0)
        return true;
    const sh_if_t *t = &sh->ifs[sh->n_ifs - 1];
    return t->outer && t->active && !t->in_cond;
}

/* Close the innermost open if, loop or case. */
static void pop_frame(shell_t *sh)
{
    sh_if_t *t = &sh->ifs[--sh->n_ifs];
    msh_words_free(&t->items);
}

static sh_if_t *push_frame(shell_t *sh, char kind)
{
    if (sh->n_ifs == SH_MAX_IF) {
        err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                 "line %d: if, loops and case nested more than %d deep", sh->line, SH_MAX_IF);
        return NULL;
    }
    bool outer = msh_active(sh);
    sh_if_t *top = &sh->ifs[sh->n_ifs++];
    memset(top, 0, sizeof *top);
    top->outer = outer;
    top->line = sh->line;
    top->kind = kind;
    return top;
}

/* The then / do that ends an if's or a while's condition: decide whether
 * the branch or the body is read (a condition the text does not decide
 * reads none of the if's branches, or not the loop's body, with a note). */
static void end_condition(shell_t *sh, sh_if_t *top)
{
    top->in_cond = false;
    int cond = top->cond;
    if (top->until && cond >= 0)
        cond = !cond;
    if (cond < 0 && !top->unknown && top->outer) {
        top->unknown = true;
        notes_add(&sh->a->notes, NOTE_IGNORED, top->kind == 'w' ? "while" : "if",
                  top->kind == 'w'
                      ? "line %d: a loop condition the text does not decide: its body "
                        "was not read"
                      : "line %d: a condition the text does not decide (a file test or "
                        "a value set outside it): none of this if's branches was read",
                  top->line);
    }
    top->active = top->outer && !top->taken && !top->unknown && cond == 1;
    top->taken = top->taken || top->active;
    if (top->kind == 'w' && top->active)
        notes_add(&sh->a->notes, NOTE_ASSUMED, "while", "line %d: the loop's body is read once",
                  top->line);
}

/* for X in A B ...; for X (over the script's arguments); for ((...)): a
 * frame holding the values. The index of the "do" when the command goes
 * on to it ("for x in a b; do" read as one command), cmd->n when it does
 * not, -1 on error. */
static int open_for(shell_t *sh, const words_t *cmd, int i)
{
    sh_if_t *top = push_frame(sh, 'f');
    if (!top)
        return -1;
    if (i + 1 < cmd->n)
        snprintf(top->var, sizeof top->var, "%s", cmd->w[i + 1]);
    int j = i + 2;
    bool in = j < cmd->n && strcmp(cmd->w[j], "in") == 0;
    bool c_style = i + 1 < cmd->n && strncmp(cmd->w[i + 1], "((", 2) == 0;
    for (j = in ? j + 1 : cmd->n; j < cmd->n && strcmp(cmd->w[j], "do") != 0; j++)
        if (msh_words_push(sh, &top->items, cmd->w[j], strlen(cmd->w[j])))
            return -1;
    top->unknown = c_style || !msh_name_char(top->var[0], true);
    for (int x = 0; x < top->items.n; x++)
        top->unknown = top->unknown || undecided_word(top->items.w[x]);
    if (!in && !c_style)
        msh_note_args(sh); /* for X; do: over the script's arguments */
    return j;
}

/* The do of a for loop: its body is read once, with the first value (a
 * note names how many there were), or not at all when the text does not
 * give the values. 0, or -1 on error. */
static int enter_for_body(shell_t *sh, sh_if_t *top)
{
    if (top->unknown && top->outer)
        notes_add(&sh->a->notes, NOTE_IGNORED, "for",
                  "line %d: a loop over values the text does not give: its body was not read",
                  top->line);
    top->active = top->outer && !top->unknown && top->items.n > 0;
    if (!top->active)
        return 0;
    shvar_t *v = msh_var_set(sh, top->var, strlen(top->var));
    if (!v || msh_words_push(sh, &v->value, top->items.w[0], strlen(top->items.w[0])))
        return -1;
    if (top->items.n > 1)
        notes_add(&sh->a->notes, NOTE_ASSUMED, "for",
                  "line %d: a loop over %d values of %s: only the first (%s) is read; give the "
                  "others' flags on scaleplan's command line to simulate them",
                  top->line, top->items.n, top->var, top->items.w[0]);
    return 0;
}

/* case WORD in: a frame holding the word; its arms are read when the text
 * gives the word. 0, or -1 on error. */
static int open_case(shell_t *sh, const words_t *cmd, int i)
{
    sh_if_t *top = push_frame(sh, 'c');
    if (!top)
        return -1;
    const char *subject = i + 1 < cmd->n ? cmd->w[i + 1] : "$";
    if (msh_words_push(sh, &top->items, subject, strlen(subject)))
        return -1;
    top->unknown = undecided_word(subject);
    top->arm_wait = true;
    if (top->outer && top->unknown)
        notes_add(&sh->a->notes, NOTE_IGNORED, "case",
                  "line %d: a case on a value the text does not give (%s): none of its "
                  "branches was read",
                  sh->line, subject);
    return 0;
}

/* One word of an arm's PATTERN) or A|B): kept; when the pattern is whole
 * (the word ends in ')'), the arm is read if it matches the case's word.
 * true when the pattern is whole, false when it goes on after '|'. */
static bool case_pattern(sh_if_t *top, const char *w)
{
    size_t len = strlen(w), used = strlen(top->pats);
    bool last = len > 0 && w[len - 1] == ')';
    snprintf(top->pats + used, sizeof top->pats - used, "%.*s\n", (int)(last ? len - 1 : len),
             w[0] == '(' ? w + 1 : w);
    if (!last)
        return false;
    bool match = false;
    for (char *p = top->pats; *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        match = match || fnmatch(p, top->items.w[0], 0) == 0;
        p = nl ? nl + 1 : p + strlen(p);
    }
    top->pats[0] = '\0';
    top->arm_wait = false;
    top->active = top->outer && !top->taken && !top->unknown && match;
    top->taken = top->taken || top->active;
    return true;
}

/* The if / elif / else / fi, for / while / until ... do / done and case /
 * esac words at the start of the command just read: updates which part
 * is read and sets *start to the first word of what remains of the
 * command. Returns 1 when that remainder is to be read, 0 when not (a
 * condition, a part not read), -1 on error.
 *
 * A loop's body is read once: a for loop's with its first value (a note
 * names how many there were), a while loop's when its condition holds
 * (and the text can decide it). A case's branches are not read (they
 * choose on the script's arguments, which a file read alone has none
 * of), with a note. */
static int control(shell_t *sh, int *start)
{
    words_t *cmd = &sh->cmd;
    int i = 0;
    while (i < cmd->n) {
        const char *w = cmd->w[i];
        sh_if_t *top = sh->n_ifs ? &sh->ifs[sh->n_ifs - 1] : NULL;
        const char *closer = top && top->kind == 'w' ? "do" : "then";
        if (top && top->in_cond && strcmp(w, closer) != 0) {
            /* another test of the condition, joined by the last operator */
            top->cond = join_tests(top->cond, top->op, eval_test(cmd, i));
            snprintf(top->op, sizeof top->op, "%s", sh->sep);
            return 0;
        }
        if (top && top->in_cond) { /* then / do: decide the branch or the body */
            end_condition(sh, top);
            i++;
            continue;
        }
        if (strcmp(w, "if") == 0 || (top && top->kind == 'i' && strcmp(w, "elif") == 0)) {
            if (w[0] == 'i' && !(top = push_frame(sh, 'i')))
                return -1;
            top->active = false;
            top->in_cond = true;
            top->cond = eval_test(cmd, i + 1);
            snprintf(top->op, sizeof top->op, "%s", sh->sep);
            return 0;
        }
        if (strcmp(w, "while") == 0 || strcmp(w, "until") == 0) {
            if (!(top = push_frame(sh, 'w')))
                return -1;
            top->until = w[0] == 'u';
            top->in_cond = true;
            top->cond = eval_test(cmd, i + 1);
            snprintf(top->op, sizeof top->op, "%s", sh->sep);
            return 0;
        }
        if (strcmp(w, "for") == 0) {
            int j = open_for(sh, cmd, i);
            if (j < 0)
                return -1;
            if (j < cmd->n) { /* "for x in a b; do" read as one command */
                i = j;
                continue;
            }
            return 0;
        }
        if (top && strcmp(w, "do") == 0 && top->kind == 'f') {
            if (enter_for_body(sh, top))
                return -1;
            i++;
            continue;
        }
        if (top && strcmp(w, "done") == 0 && (top->kind == 'f' || top->kind == 'w')) {
            pop_frame(sh);
            i++;
            continue;
        }
        if (strcmp(w, "case") == 0)
            return open_case(sh, cmd, i);
        if (top && top->kind == 'c' && top->arm_wait && strcmp(w, "esac") != 0) {
            /* PATTERN) or A|B) starting an arm: read when it matches */
            if (!case_pattern(top, w))
                return 0; /* the pattern goes on after '|' */
            i++;
            continue;
        }
        if (top && top->kind == 'c' && strcmp(w, "esac") == 0) {
            pop_frame(sh);
            i++;
            continue;
        }
        if (top && top->kind == 'i' && strcmp(w, "else") == 0) {
            top->active = top->outer && !top->taken && !top->unknown;
            top->taken = true;
            i++;
            continue;
        }
        if (top && top->kind == 'i' && strcmp(w, "fi") == 0) {
            pop_frame(sh);
            i++;
            continue;
        }
        break;
    }
    *start = i;
    return i < cmd->n && msh_active(sh);
}

/* The refusal of a text whose expansions pass the caps, at its line. */
static int too_big(shell_t *sh)
{
    return err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                    "line %d: expanding the variables makes more than %d MiB of words or %d "
                    "words in one list (a variable that grows by itself?); no launch script "
                    "needs that many",
                    sh->line, (int)(MEGATRON_MAX_EXPANDED_BYTES >> 20), MEGATRON_MAX_WORDS);
}

/* Read the commands of sh->s from sh->pos to its end. 0, or -1 with
 * sh->err set (or sh->oom / sh->too_big). */
static int sh_run(shell_t *sh)
{
    for (;;) {
        sh->hs_index = -1;
        int r = msh_read_words(sh, &sh->cmd, false);
        if (r < 0)
            return -1;
        free(sh->herestring);
        sh->herestring = NULL;
        if (sh->hs_index >= 0 && sh->hs_index < sh->cmd.n) {
            /* the word after <<< is read's input, not an argument */
            sh->herestring = sh->cmd.w[sh->hs_index];
            memmove(sh->cmd.w + sh->hs_index, sh->cmd.w + sh->hs_index + 1,
                    (size_t)(sh->cmd.n - sh->hs_index - 1) * sizeof *sh->cmd.w);
            sh->cmd.n--;
        }
        int start = 0, run = sh->cmd.n ? control(sh, &start) : 0;
        if (run < 0)
            return -1;
        if (run && take_command(sh, start))
            return -1;
        msh_words_free(&sh->cmd);
        if (sh->n_ifs && sh->ifs[sh->n_ifs - 1].kind == 'c' && strcmp(sh->sep, ";;") == 0) {
            /* ;; ends the arm */
            sh->ifs[sh->n_ifs - 1].arm_wait = true;
            sh->ifs[sh->n_ifs - 1].active = false;
        }
        if (!sh->hd_pending) {
            /* a heredoc belongs to the command that announced it */
            free(sh->heredoc);
            sh->heredoc = NULL;
        }
        if (r == 0)
            return 0;
    }
}

/* Read text as a script inside the one being read (a heredoc given to
 * sbatch, bash -c TEXT, eval): the same variables, its own position. */
static int run_text(shell_t *sh, const char *text, size_t len)
{
    if (sh->depth >= SH_MAX_DEPTH)
        return err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                        "line %d: scripts inside scripts nested more than %d deep", sh->line,
                        SH_MAX_DEPTH),
               -1;
    const char *s0 = sh->s;
    size_t len0 = sh->len, pos0 = sh->pos;
    int line0 = sh->line, n_ifs0 = sh->n_ifs;
    words_t cmd0 = sh->cmd;
    char sep0[3];
    memcpy(sep0, sh->sep, sizeof sep0);
    memset(&sh->cmd, 0, sizeof sh->cmd);
    sh->s = text;
    sh->len = len;
    sh->pos = 0;
    sh->depth++;
    int rc = sh_run(sh);
    sh->depth--;
    msh_words_free(&sh->cmd);
    while (sh->n_ifs > n_ifs0) /* an if the inner text left open */
        pop_frame(sh);
    sh->cmd = cmd0;
    sh->s = s0;
    sh->len = len0;
    sh->pos = pos0;
    sh->line = line0;
    sh->hd_pending = false;
    memcpy(sh->sep, sep0, sizeof sep0);
    return rc;
}

/* Read a shell text into sh (the words of its training command into
 * sh->chosen). ERR_OK or the refusal. */
static int shell_read(shell_t *sh, megatron_args_t *a, const char *text, size_t len, bool collect,
                      err_t *err)
{
    memset(sh, 0, sizeof *sh);
    sh->collect = collect;
    sh->a = a;
    sh->s = text;
    sh->len = len;
    sh->line = 1;
    sh->err = err;
    sh->hs_index = -1;
    int r = sh_run(sh);
    int rc = ERR_OK;
    if (r == 0 && !collect && a->nproc_per_node == 0 && sh->chose_script) {
        if (sh->sb_nodes > 0 && sh->sb_tasks > 0) {
            a->nnodes = sh->sb_nodes;
            a->nproc_per_node = sh->sb_tasks;
            notes_add(&a->notes, NOTE_ASSUMED, "#SBATCH",
                      "%d nodes x %d tasks per node, from the file's #SBATCH lines",
                      sh->sb_nodes, sh->sb_tasks);
        } else if (sh->single) {
            a->nnodes = a->nproc_per_node = 1;
            notes_add(&a->notes, NOTE_ASSUMED, a->script,
                      "run by python without a launcher: one process, one GPU");
        }
    }
    if (r < 0 || sh->oom || sh->too_big)
        rc = sh->too_big ? too_big(sh)
             : sh->oom   ? err_set(err, ERR_RUNTIME, "out of memory reading Megatron arguments")
                         : ERR_INPUT;
    a->expanded_bytes += sh->made;
    return rc;
}

static void shell_free(shell_t *sh)
{
    msh_words_free(&sh->cmd);
    msh_words_free(&sh->chosen);
    for (int i = 0; i < sh->n_vars; i++)
        msh_words_free(&sh->vars[i].value);
    free(sh->vars);
    while (sh->n_ifs > 0)
        pop_frame(sh);
    free(sh->heredoc);
    free(sh->herestring);
}

int megatron_args_parse_text(megatron_args_t *a, const char *text, size_t len, err_t *err)
{
    shell_t sh;
    int rc = shell_read(&sh, a, text, len, false, err);
    if (!rc)
        rc = megatron_args_parse_argv(a, sh.chosen.n, (const char *const *)sh.chosen.w, err);
    shell_free(&sh);
    return rc;
}

int megatron_shell_command(const char *text, size_t len, const char *origin, char **out,
                           notes_t *notes, err_t *err)
{
    megatron_args_t a;
    megatron_args_init(&a, origin);
    shell_t sh;
    *out = NULL;
    int rc = shell_read(&sh, &a, text, len, true, err);
    if (!rc && sh.chose_script) {
        size_t n = 1;
        for (int i = 0; i < sh.chosen.n; i++)
            n += strlen(sh.chosen.w[i]) + 3;
        char *t = malloc(n);
        if (!t) {
            rc = err_set(err, ERR_RUNTIME, "out of memory reading a launch command");
        } else {
            /* one word a line: the Bridge readers split at blanks, and a
             * word with blanks in it is quoted */
            size_t k = 0;
            for (int i = 0; i < sh.chosen.n; i++) {
                const char *w = sh.chosen.w[i];
                bool q = strpbrk(w, " \t") != NULL && !strchr(w, '"');
                k += (size_t)sprintf(t + k, q ? "\"%s\"\n" : "%s\n", w);
            }
            t[k] = '\0';
            *out = t;
        }
    }
    if (notes)
        notes_append(notes, &a.notes);
    shell_free(&sh);
    megatron_args_free(&a);
    return rc;
}
