#!/usr/bin/env python3
"""levels.py — per difficulty level, what a corpus built at that level
holds: median main-fixture rows (all tasks, and analytics and SQL tasks
alone, whose rows the levels grow), share of value-family tasks asked as
programs, median prompt length (characters), traps
armed per task (the template's trap, or each named trap of a compound
task, plus the trap modules armed: mean and min), trap modules armed
per task of the templates that accept them (mean, min), admission rate (admitted tasks over draws) and build time per
1,000 tasks.  Builds one corpus per level from seeds.toml with
`difficulty` set to that level in [corpus] (and none per template).

    python3 bench/levels.py [--vat build/vat] [--config seeds.toml] [--jobs 2]

Figures belong in closing notes, not in docs (docs/limits.md)."""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

MODULES = {'exact_duplicates', 'status_spelling', 'text_numbers', 'test_records',
           'totals_line', 'day_first_dates', 'placeholder_keys', 'lookalike_column',
           'late_rows', 'cutoff_boundary', 'sign_convention',
           'distractor_table'}
ACCEPTING = {'grouped_sum', 'filtered_total', 'grouped_count', 'grouped_mean', 'pivot',
             'date_window', 'top_n', 'threshold_flags', 'dedupe_aggregate',
             'distinct_customers', 'join_aggregate'}


def corpus_config(text, level):
    text = re.sub(r'(?m)^difficulty\s*=.*$', '', text)
    return text.replace('[corpus]\n', '[corpus]\ndifficulty = %d\n' % level, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--vat', default='build/vat')
    ap.add_argument('--config', default='seeds.toml')
    ap.add_argument('--jobs', default='2')
    a = ap.parse_args()
    base = open(a.config).read()
    print('level  tasks  rows  rows(an+sql)  as program  prompt chars  traps mean/min  '
          'modules mean/min  admission  s/1000 tasks')
    for level in range(1, 6):
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, 'seeds.toml')
            with open(cfg, 'w') as f:
                f.write(corpus_config(base, level))
            t0 = time.monotonic()
            out = subprocess.run([a.vat, 'build', '--config', cfg, '--root', d, '--jobs', a.jobs,
                                  '--quiet'], capture_output=True, text=True)
            secs = time.monotonic() - t0
            if out.returncode != 0:
                sys.exit('level %d: %s' % (level, out.stderr.strip()))
            rows = []
            data_rows = []
            programs = []
            prompts = []
            traps = []
            modules = []
            for path in glob.glob(os.path.join(d, 'out', 'experience', '*.jsonl')):
                for line in open(path):
                    r = json.loads(line)
                    if r['difficulty'] != level:
                        sys.exit('level %d: %s has difficulty %d' % (level, r['task_id'],
                                                                     r['difficulty']))
                    rows.append(r['fixture']['rows'])
                    if r['family'] in ('analytics', 'sql'):
                        data_rows.append(r['fixture']['rows'])
                    if r['family'] == 'analytics':
                        programs.append(r['answer_form'] == 'sql')
                    prompts.append(len(r['prompt']))
                    mods = sum(1 for n in r['armed_traps'] if n in MODULES)
                    own = len(r['armed_traps']) - mods
                    traps.append(max(1, own) + mods)
                    if r['template'] in ACCEPTING:
                        modules.append(mods)
            m = re.search(r'(?m)^total\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)', out.stdout + out.stderr)
            admitted, redrawn = (int(m.group(2)), int(m.group(3))) if m else (len(rows), 0)
            print('%5d  %5d  %4d  %12d  %9.0f%%  %12d  %9.2f/%d  %12.2f/%d  %8.1f%%  %12.1f' % (
                level, len(rows), statistics.median(rows), statistics.median(data_rows),
                100.0 * sum(programs) / len(programs), statistics.median(prompts),
                statistics.mean(traps), min(traps), statistics.mean(modules), min(modules),
                100.0 * admitted / (admitted + redrawn), 1000.0 * secs / len(rows)))


if __name__ == '__main__':
    main()
