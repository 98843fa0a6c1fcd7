#!/usr/bin/env python3
"""trl_sft_env.py CORPUS_ROOT MODEL -- SFT on the expert transcripts: the
env table's prompt, completion (tool calls, observations, the answer) and
tools (JSON text, which SFTTrainer reads as it is) are TRL's
conversational prompt-completion form with tools.  Chat templates that
want a tool call's arguments as a dict get them from vat.agents.sft_example
(the datasets Json type holds them)."""
import sys

from datasets import load_dataset
from trl import SFTConfig, SFTTrainer


def main(argv):
    root, model = argv[1], argv[2]
    ds = load_dataset("json", data_files={"train": f"{root}/out/env/train.jsonl"}, split="train")
    ds = ds.filter(lambda r: len(r["completion"]) > 0).select_columns(
        ["prompt", "completion", "tools"])
    SFTTrainer(model=model, train_dataset=ds,
               args=SFTConfig(output_dir="vat-sft-env", max_length=8192)).train()


if __name__ == "__main__":
    main(sys.argv)
