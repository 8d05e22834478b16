#!/usr/bin/env python3
"""The ModelOpt flags pretrain_gpt.py adds to Megatron-LM's parser, as rows
of inputs/megatron_flags.tsv.

    python3 tools/gen-modelopt-flags.py MEGATRON_GIT COMMIT >> inputs/megatron_flags.tsv

pretrain_gpt.py (and pretrain_hybrid.py) pass add_modelopt_args of
megatron/post_training/arguments.py as the extra-arguments provider when
nvidia-modelopt is installed (NVIDIA's containers have it), so a launch
script may use those flags. The file's add_argument calls are read without
running anything (Python's ast); each becomes a row with the columns of
megatron_flags.tsv. The speed/memory column is ours: a distillation teacher
and the local attention kernel change what runs; the export and
quantization settings of a checkpoint do not change a training step."""
import ast
import subprocess
import sys

PERF = {"export_force_local_attention", "export_kd_teacher_load", "export_default_te_spec",
        "export_qk_l2_norm", "export_moe_apply_probs_on_input", "export_offline_model"}


def main():
    git, rev = sys.argv[1], sys.argv[2]
    text = subprocess.run(["git", "--git-dir", git, "show",
                           f"{rev}:megatron/post_training/arguments.py"],
                          capture_output=True, text=True, check=True).stdout
    tree = ast.parse(text)
    for fn in tree.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "add_modelopt_args"):
            continue
        group = "modelopt"
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr == "add_argument_group":
                for kw in node.keywords:
                    if kw.arg == "title":
                        group = ast.literal_eval(kw.value)
                continue
            if node.func.attr != "add_argument":
                continue
            flags = [ast.literal_eval(a) for a in node.args]
            kw = {}
            for k in node.keywords:
                if k.arg == "type":
                    kw["type"] = k.value.id if isinstance(k.value, ast.Name) else "str"
                elif k.arg in ("action", "default", "choices", "nargs", "dest"):
                    try:
                        kw[k.arg] = ast.literal_eval(k.value)
                    except ValueError:
                        kw[k.arg] = None
            dest = kw.get("dest") or flags[0].lstrip("-").replace("-", "_")
            action = kw.get("action")
            if action == "store_true":
                kind, typ, default = "switch(on)", "", kw.get("default", False)
            elif action == "store_false":
                kind, typ, default = "switch(off)", "", kw.get("default", True)
            else:
                typ = kw.get("type", "str")
                kind = "choice" if kw.get("choices") else {"int": "int", "float": "float"}.get(
                    typ, "string")
                default = kw.get("default")
            nargs = kw.get("nargs") or ""
            choices = ",".join(str(c) for c in kw.get("choices") or [])
            perf = "yes" if dest in PERF else "no"
            print("\t".join(["|".join(flags), dest, kind, typ, str(nargs), repr(default), choices,
                             group, perf]))


if __name__ == "__main__":
    main()
