#!/usr/bin/env python3
"""verl_make_dataset.py CORPUS_ROOT OUT_DIR [data|regex] -- the env table
as verl parquet files (OUT_DIR/vat_<set>_<split>.parquet): one row per
task of that tool set, with agent_name tool_agent, the agent prompt, and
the task in extra_info.tools_kwargs (vat.verl_tools.dataset_rows).
Needs pandas and pyarrow (verl's own requirements)."""
import os
import sys

import pandas as pd

import vat.verl_tools


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    root, out = argv[1], argv[2]
    tool_set = argv[3] if len(argv) > 3 else "data"
    os.makedirs(out, exist_ok=True)
    for split in ("train", "test"):
        rows = vat.verl_tools.dataset_rows(root, split, tool_set)
        path = os.path.join(out, f"vat_{tool_set}_{split}.parquet")
        pd.DataFrame(rows).to_parquet(path)
        print(f"{path}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
