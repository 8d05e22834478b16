"""The Python module against the command line: the same documents, the same
messages, threads that run in parallel. Run by `make python` (Debian's
python3-pytest); SCALEPLAN_BIN names the binary to compare with."""

import json
import os
import re
import shlex
import subprocess
import threading

import pytest

import scaleplan

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("SCALEPLAN_BIN", os.path.join(ROOT, "bin", "scaleplan"))


def cli(args):
    env = dict(os.environ, SCALEPLAN_PROGRESS="0")
    return subprocess.run([BIN] + args, cwd=ROOT, capture_output=True, text=True, env=env)


def _options():
    """command -> {flag or alias: (canonical name, takes a value)}"""
    table = {}
    for line in cli(["--list-options"]).stdout.splitlines():
        cmd, name, alias, metavar, _kind = line.split("\t")
        entry = (name, metavar != "-")
        table.setdefault(cmd, {})[name] = entry
        if alias != "-":
            table[cmd][alias] = entry
    return table


OPTIONS = _options()


def kwargs_of(command, words):
    """A command line's words as the module's keyword arguments."""
    kw, i = {}, 0
    while i < len(words):
        w = words[i]
        if w.startswith("--") and w != "--json":
            name, value = OPTIONS[command][w]
            key = name[2:].replace("-", "_")
            if value:
                i += 1
                v = words[i]
            else:
                v = True
            if key in kw:
                kw[key] = (kw[key] if isinstance(kw[key], list) else [kw[key]]) + [v]
            else:
                kw[key] = v
        elif w != "--json":
            kw.setdefault("args", []).append(w)
        i += 1
    return kw


def masked(doc):
    text = json.dumps(doc, sort_keys=True)
    return re.sub(r'"elapsed_s": [^,}]*', '"elapsed_s": 0', text)


def golden_json_cases():
    cases = []
    with open(os.path.join(ROOT, "tests", "golden", "cases.txt")) as f:
        for line in f:
            if not line.strip() or line.startswith("#") or "|" not in line:
                continue
            name, args = (s.strip() for s in line.split("|", 1))
            words = shlex.split(args)
            if "--json" in words:
                cases.append(pytest.param(words, id=name))
    return cases


@pytest.mark.parametrize("words", golden_json_cases())
def test_same_document_as_cli(words):
    """For every golden command with --json, the module returns the same document."""
    command, rest = words[0], words[1:]
    done = cli(words)
    kw = kwargs_of(command, rest)
    os.chdir(ROOT)
    with scaleplan.Context() as ctx:
        if done.returncode == 0:
            doc = ctx.run(command, **kw)
        else:
            with pytest.raises(scaleplan.Error) as e:
                ctx.run(command, **kw)
            assert e.value.message == done.stderr.strip()
            if not done.stdout.strip():
                assert e.value.document is None
                return
            doc = e.value.document
    assert masked(doc) == masked(json.loads(done.stdout))


def test_input_error_is_the_cli_message():
    done = cli(["sim", "--model", "llama3-8b", "--gpu", "h100-sxm", "--gpus", "8", "--tp", "3"])
    assert done.returncode == 2
    with pytest.raises(scaleplan.InputError) as e:
        scaleplan.sim(model="llama3-8b", gpu="h100-sxm", gpus=8, tp=3)
    assert e.value.message == done.stderr.strip()
    with pytest.raises(scaleplan.InputError) as e:
        scaleplan.sim(model="llama3-8b", gpu="h100-sxm", gpus=8, no_such_flag=1)
    assert "--no-such-flag" in e.value.message
    with pytest.raises(scaleplan.InputError):
        scaleplan.sim(model="llama3-8b", gpu="h100-sxm", gpus=float("nan"))
    with pytest.raises(scaleplan.InputError):
        scaleplan.Context().run("no-such-command")


def test_does_not_fit_keeps_the_document():
    with pytest.raises(scaleplan.Error) as e:
        scaleplan.sim(model="llama3-405b", gpu="h100-sxm", gpus=8, tp=8, global_batch=8)
    assert not isinstance(e.value, scaleplan.InputError)
    assert e.value.document["fits"] is False


def test_step_time_is_the_documents():
    """The fast path gives sim's step time, and sim's messages on bad input."""
    specs = [dict(model="gpt3-175b", gpu="a100-80g", gpus=64, tp=8, pp=8, micro_batch=1,
                  global_batch=64, seq_len=2048, sequence_parallel=True,
                  recompute="selective"),
             dict(model="llama3-8b", gpu="h100-sxm", gpus=64, tp=2, global_batch=64,
                  allow_oom=True)]
    for spec in specs:
        # the document rounds to 10 significant digits
        assert scaleplan.step_time(**spec) == pytest.approx(scaleplan.sim(**spec)["step_time_s"],
                                                            rel=1e-9)
    done = cli(["sim", "--model", "llama3-8b", "--gpu", "h100-sxm", "--gpus", "8", "--tp", "3"])
    with pytest.raises(scaleplan.InputError) as e:
        scaleplan.step_time(model="llama3-8b", gpu="h100-sxm", gpus=8, tp=3)
    assert e.value.message == done.stderr.strip()
    with pytest.raises(scaleplan.Error) as e:
        scaleplan.step_time(model="llama3-405b", gpu="h100-sxm", gpus=8, tp=8, global_batch=8)
    assert not isinstance(e.value, scaleplan.InputError)
    assert "does not fit" in e.value.message


def test_threads_give_the_same_documents():
    specs = [dict(model="llama3-8b", gpu="h100-sxm", gpus=64, tp=tp, global_batch=64,
                  allow_oom=True) for tp in (1, 2, 4, 8)]
    alone = [masked(scaleplan.sim(**s)) for s in specs]
    got = [None] * len(specs)

    def work(i):
        got[i] = masked(scaleplan.sim(**specs[i]))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(specs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == alone


def test_export_writes_the_framework_flags():
    text = scaleplan.export("megatron", model="llama3-8b", tokens="100B", gpu="h100-sxm",
                            min_gpus=64, max_gpus=64)
    assert "--tensor-model-parallel-size" in text


def test_to_dataframe():
    pandas = pytest.importorskip("pandas")
    r = scaleplan.plan(model="llama3-8b", tokens="100B", gpu="h100-sxm", min_gpus=8,
                       max_gpus=32, trials=20)
    df = scaleplan.to_dataframe(r)
    assert isinstance(df, pandas.DataFrame) and len(df) == len(r["ladder"])


def test_versions():
    assert scaleplan.abi_version() == 1
    assert scaleplan.version() == cli(["--version"]).stdout.split()[1]
