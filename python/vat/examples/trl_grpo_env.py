#!/usr/bin/env python3
"""trl_grpo_env.py CORPUS_ROOT MODEL -- GRPO on vat episodes with TRL's
GRPOTrainer and environment_factory (TRL >= 1.0, transformers >= 5.2):
one environment per rollout, its tools plain Python methods (describe,
sample, sql, submit for data tasks; sample, try, submit for regex tasks),
the reward the episode's (or, when the model never submitted, its last
message scored as the answer).  The dataset is the env table: its
tool_set column routes each task to its environment."""
import sys

from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer

import vat.agents


def main(argv):
    root, model = argv[1], argv[2]
    files = {s: f"{root}/out/env/{s}.jsonl" for s in ("train", "test")}
    ds = load_dataset("json", data_files=files, split="train")
    ds = ds.rename_column("tool_set", "environment").select_columns(
        ["prompt", "task_id", "environment"])
    trainer = GRPOTrainer(
        model=model,
        args=GRPOConfig(output_dir="vat-grpo-env", max_completion_length=4096,
                        num_generations=8),
        train_dataset=ds,
        environment_factory=vat.agents.trl_environments(root),
        reward_funcs=[vat.agents.trl_reward()],
    )
    trainer.train()


if __name__ == "__main__":
    main(sys.argv)
