#!/usr/bin/env python3
"""The layouts of Megatron-Bridge's performance configs as data.

    python3 tools/gen-bridge-perf-configs.py BRIDGE_GIT > inputs/bridge_perf_configs.tsv
    python3 tools/gen-bridge-perf-configs.py --inc inputs/bridge_perf_configs.tsv \
        > inputs/bridge_perf_configs.inc

BRIDGE_GIT is a git directory of github:NVIDIA-NeMo/Megatron-Bridge (a bare
clone works). For each release below, every WorkloadBaseConfig constant of
scripts/performance/configs/*/*workload_base_configs.py is read without
running anything: the module's text is parsed (Python's ast), and each
constant's fields are WorkloadBaseConfig's defaults (scripts/performance/
utils/utils.py) under the keywords of its WorkloadBaseConfig(...) or
dataclasses.replace(BASE, ...) chain. The sequence length is the one the
family's *_llm_pretrain.py sets (cfg.model.seq_length = N) when it sets
exactly one, else 0 (the recipe's own).

Releases: v0.2.2 (the launcher's -m MODEL -s SIZE form; constants
MODEL_SIZE_GPU[_TASK]_PREC_BASE_CONFIG) and v0.5.0 (-m FAMILY -mr RECIPE;
constants RECIPE_TASK_CONFIG_GPU_PREC_VARIANT, the launcher taking v2 where
there is one, else v1)."""
import ast
import re
import subprocess
import sys

RELEASES = ["v0.2.2", "v0.5.0"]
FIELDS = ["num_gpus", "tensor_model_parallel_size", "pipeline_model_parallel_size",
          "context_parallel_size", "virtual_pipeline_model_parallel_size",
          "expert_model_parallel_size", "expert_tensor_parallel_size", "micro_batch_size",
          "global_batch_size", "use_megatron_fsdp", "cpu_offloading_num_layers",
          "recompute_num_layers", "recompute_modules"]
COLUMNS = ["release", "recipe", "task", "gpu", "precision", "variant", "gpus", "tp", "pp", "cp",
           "vpp", "ep", "etp", "mbs", "gbs", "fsdp", "offload_layers", "recompute_layers",
           "recompute_modules", "seq_len"]
PRECISIONS = ["BF16", "FP8_CS", "FP8_MX", "FP8_SC", "NVFP4"]


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True, text=True,
                          check=True).stdout


def defaults(repo, rev):
    """WorkloadBaseConfig's fields and defaults (utils/utils.py)."""
    tree = ast.parse(git(repo, "show", f"{rev}:scripts/performance/utils/utils.py"))
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "WorkloadBaseConfig":
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value:
                    try:
                        out[st.target.id] = ast.literal_eval(st.value)
                    except ValueError:
                        out[st.target.id] = None
    return out


def constants(text, base):
    """name -> fields of each WorkloadBaseConfig constant of a module."""
    env = {}
    for st in ast.parse(text).body:
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and
                isinstance(st.targets[0], ast.Name)):
            continue
        name, v = st.targets[0].id, st.value
        if isinstance(v, ast.Name) and v.id in env:
            env[name] = dict(env[v.id])
            continue
        if not isinstance(v, ast.Call) or not isinstance(v.func, ast.Name):
            continue
        if v.func.id == "WorkloadBaseConfig":
            fields = dict(base)
        elif v.func.id == "replace" and v.args and isinstance(v.args[0], ast.Name) \
                and v.args[0].id in env:
            fields = dict(env[v.args[0].id])
        else:
            continue
        for kw in v.keywords:
            try:
                fields[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                fields[kw.arg] = None
        env[name] = fields
    return env


def seq_length(repo, rev, path):
    """The one cfg.model.seq_length a *_llm_pretrain.py sets, else 0."""
    try:
        text = git(repo, "show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return 0
    found = set(re.findall(r"cfg\.model\.seq_length\s*=\s*(\d+)\s*$", text, re.M))
    return int(found.pop()) if len(found) == 1 else 0


def value(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, list):
        return ",".join(str(x) for x in v) or "-"
    return str(v)


def rows(repo, rev):
    base = defaults(repo, rev)
    files = [p for p in git(repo, "ls-tree", "-r", "--name-only", rev).split("\n")
             if re.match(r"scripts/performance/configs/[^/]+/[^/]*workload_base_configs\.py$", p)]
    out = []
    for path in sorted(files):
        folder = path.split("/")[-2]
        env = constants(git(repo, "show", f"{rev}:{path}"), base)
        for name, f in env.items():
            if rev == "v0.2.2":
                m = re.match(r"(.+)_(H100|B200|GB200|GB300|B300)_"
                             r"(?:(SFT|LORA)_)?(" + "|".join(PRECISIONS) + r")_BASE_CONFIG$", name)
                if not m:
                    continue
                recipe = m.group(1).lower()  # MODEL_SIZE: -m MODEL -s SIZE joined
                task = (m.group(3) or "pretrain").lower()
                gpu, prec, variant = m.group(2).lower(), m.group(4).lower(), "-"
                pretrain = f"scripts/performance/configs/{folder}/{folder}_llm_pretrain.py"
            else:
                m = re.match(r"(.+)_(PRETRAIN|SFT|LORA)_CONFIG_([A-Z0-9]+)_(" +
                             "|".join(PRECISIONS) + r")_(V\d+)$", name)
                if not m:
                    continue
                recipe, task = m.group(1).lower(), m.group(2).lower()
                gpu, prec, variant = m.group(3).lower(), m.group(4).lower(), m.group(5).lower()
                stem = path.split("/")[-1].replace("_workload_base_configs.py", "")
                pretrain = f"scripts/performance/configs/{folder}/{stem}_llm_pretrain.py"
            seq = seq_length(repo, rev, pretrain) if task == "pretrain" else 0
            out.append([rev, recipe, task, gpu, prec, variant] +
                       [value(f.get(k)) for k in FIELDS] + [str(seq)])
    return out


def to_inc(tsv):
    print("/* Generated by tools/gen-bridge-perf-configs.py --inc from "
          "inputs/bridge_perf_configs.tsv; do not edit. */")
    for line in open(tsv):
        if line.startswith("#") or line.startswith("release\t"):
            continue
        f = line.rstrip("\n").split("\t")
        ints = [("0" if x == "-" else x) for x in f[6:18]]
        print('{"%s", "%s", "%s", "%s", "%s", "%s", %s, "%s", %s},' % (
            f[0], f[1], f[2], f[3], f[4], f[5], ", ".join(ints),
            "" if f[18] == "-" else f[18], f[19]))


def main():
    if sys.argv[1] == "--inc":
        to_inc(sys.argv[2])
        return
    repo = sys.argv[1]
    commits = {r: git(repo, "rev-list", "-n", "1", r).strip() for r in RELEASES}
    print("# Megatron-Bridge performance layouts (scripts/performance/configs/*/"
          "*workload_base_configs.py), read by tools/gen-bridge-perf-configs.py at " +
          ", ".join(f"{r} ({c})" for r, c in commits.items()) +
          "; '-' = not set (WorkloadBaseConfig's None: the recipe's own).")
    print("\t".join(COLUMNS))
    for r in RELEASES:
        for row in rows(repo, r):
            print("\t".join(row))


if __name__ == "__main__":
    main()
