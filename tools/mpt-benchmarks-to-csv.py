#!/usr/bin/env python3
"""Turn llm-foundry's MPT training benchmark tables into rows of the
throughput.csv schema (tests/fixtures/validation/mpt/runs.csv).

usage: tools/mpt-benchmarks-to-csv.py README.md throughput.csv out.csv

README.md is scripts/train/benchmarking/README.md of mosaicml/llm-foundry
(git show 4952183768:scripts/train/benchmarking/README.md); throughput.csv is
the shared table, whose llm-foundry rows are left out so that no run is
counted twice. Model dimensions are those of scripts/train/yamls/pretrain/
mpt-<size>.yaml at the same commit (n_layers, d_model, n_heads; expansion
ratio 4, vocabulary 50368)."""
import csv
import sys

DIMS = {'125m': (12, 768, 12), '350m': (24, 1024, 16), '760m': (24, 1536, 12),
        '1b': (24, 2048, 16), '3b': (32, 2560, 20), '7b': (32, 4096, 32),
        '13b': (40, 5120, 40), '30b': (48, 7168, 64), '70b': (80, 8192, 64)}
LOCATOR = 'github:mosaicml/llm-foundry scripts/train/benchmarking/README.md @4952183768'


def precision(prec, mode):
    return prec if mode == 'DEFAULT' else '%s (%s)' % (prec, mode)


def section_text(title):
    """'A100 80GB with 1600 Gbps node-node interconnect (RoCE)' -> 'A100 80GB, 1600Gbps RoCE',
    the wording of the shared table's rows from these tables."""
    return title.replace(' with 1600 Gbps node-node interconnect (RoCE)', ', 1600Gbps RoCE')


def main(readme, shared, out_path):
    with open(shared, newline='') as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames
        seen = {(r['model'].lower(), r['seq_len'], r['gpu_type'], r['num_gpus'], r['micro_batch'],
                 r['global_batch_seqs'], r['precision'])
                for r in reader if 'foundry' in r['framework']}
    with open(out_path, 'w', newline='') as f:
        out = csv.DictWriter(f, fieldnames=header, lineterminator='\n')
        out.writeheader()
        section, n, dup = None, 0, 0
        for line in open(readme).read().splitlines():
            if line.startswith('## '):
                section = line[3:].strip()
                continue
            if section is None or not line.startswith('|') or '---' in line or 'Model' in line:
                continue
            cells = [x.strip() for x in line.strip().strip('|').split('|')]
            (model, seq, gpus, gpu, mfu, hfu, _tflop, mb, ga, gbs, _sps, _tps, tpsg, gbt, prec, mode,
             shard, ckpt, offload, nparams) = cells
            if ('mpt-' + model, seq, gpu, gpus, mb, gbs, precision(prec, mode)) in seen:
                dup += 1
                continue
            layers, hidden, heads = DIMS[model]
            n += 1
            row = dict.fromkeys(header, '')
            row.update({
                'row_id': 'M%03d' % n, 'source_title': 'MosaicML MPT training benchmarks',
                'source_locator': LOCATOR, 'table_or_section': section_text(section),
                'model': 'MPT-' + model, 'params_B': '%.2f' % (int(nparams) / 1e9),
                'layers': layers, 'hidden': hidden, 'heads': heads, 'kv_heads': heads,
                'ffn': 4 * hidden, 'vocab': 50368, 'seq_len': seq, 'gpu_type': gpu,
                'num_gpus': gpus, 'tp': 1, 'pp': 1, 'dp': gpus, 'micro_batch': mb,
                'global_batch_seqs': gbs, 'global_batch_tokens': gbt,
                'zero_or_fsdp': 'FSDP ' + shard,
                'act_recompute': 'full' if ckpt == 'True' else 'none',
                'precision': precision(prec, mode), 'framework': 'Composer/llm-foundry (FSDP)',
                'mfu_pct': mfu, 'hfu_pct': hfu, 'tokens_per_sec_per_gpu': tpsg,
                'other_result': 'GradAccum=' + ga,
                'derived_fields': 'layers/hidden/heads/ffn/vocab from scripts/train/yamls/pretrain/'
                                  'mpt-%s.yaml' % model,
                'notes': 'MFU includes attention FLOPs; HFU counts an extra fwd when activation '
                         'checkpointing; activation CPU offload %s' % offload})
            out.writerow(row)
    print('%d rows written, %d already in %s' % (n, dup, shared), file=sys.stderr)


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
