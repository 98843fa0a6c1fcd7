"""verl_tools.py -- vat's episodes as verl tools (multi-turn tool use).

One tool class per tool, following verl's ``BaseTool`` (verl v0.7.0,
verl/tools/base_tool.py: ``__init__(config, tool_schema)``,
``get_openai_tool_schema()``, async ``create(instance_id=None, **kwargs)
-> (instance_id, ToolResponse)``, async ``execute(instance_id, parameters,
**kwargs) -> (ToolResponse, reward, metrics)``, async ``calc_reward``,
async ``release``)::

    VatDescribeTool  describe()            data tasks
    VatSampleTool    sample(table, n)      data tasks (config tool_set: regex -> sample(n))
    VatSqlTool       sql(query)            data tasks
    VatTryTool       try(pattern)          regex tasks
    VatSubmitTool    submit(answer)        both

Tool config (``actor_rollout_ref.rollout.multi_turn.tool_config_path``;
python/vat/examples/verl_tools_data.yaml and verl_tools_regex.yaml)::

    tools:
      - class_name: vat.verl_tools.VatSqlTool
        config: {type: native, root: /data/corpus}

``tool_schema`` may be left out: each class gives vat's own schema.  Each
row of the dataset carries the task in ``extra_info.tools_kwargs`` (verl's
convention, read by the agent loop and handed to ``create`` as
``create_kwargs``); ``dataset_rows`` writes such rows from the env table::

    "extra_info": {"task_id": ..., "root": ...,
                   "tools_kwargs": {"sql": {"create_kwargs": {"task_id": ..., "root": ...}},
                                    ...}}

One episode per trajectory.  verl v0.7.0's ToolAgentLoop creates, runs and
releases a tool instance for every call and hands ``execute`` its
``agent_data``: the episode lives in ``agent_data.extra_fields`` (verl's
place for tool session data), so all the calls of one trajectory share it.
Without agent_data (rollouts that create one instance per trajectory and
release it at the end) the episode lives with the instance.  ``submit``
returns the answer's score as the tool reward; the other tools return
None, which the agent loop leaves out of ``tool_rewards``, so
``compute_score`` (custom_reward_function) takes the submit's score from
``extra_info["tool_rewards"]`` and, when the trajectory never submitted,
scores its final response text as vat.rewards.verl_compute_score does.

verl is imported only when it is installed; otherwise the classes derive
from a small stand-in with the same signatures (for tests and for reading).
"""
import json
import os
import threading
from uuid import uuid4

if __package__:
    from . import rewards as _rewards
    from .env import Env, tool_schemas
else:  # loaded by file path
    import sys

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from vat import rewards as _rewards
    from vat.env import Env, tool_schemas

try:  # the real thing when verl is installed
    from verl.tools.base_tool import BaseTool
    from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

    HAVE_VERL = True
except ImportError:  # a stand-in with verl's signatures
    HAVE_VERL = False
    OpenAIFunctionToolSchema = None

    class ToolResponse:
        """verl.tools.schemas.ToolResponse's text part."""

        def __init__(self, text=None, image=None, video=None):
            self.text, self.image, self.video = text, image, video

        def is_empty(self):
            return not self.text and not self.image and not self.video

    class _Schema(dict):
        """A dict that reads like verl's pydantic schema (schema.function.name)."""

        def __getattr__(self, key):
            v = self[key]
            return _Schema(v) if isinstance(v, dict) else v

        def model_dump(self, **kwargs):
            return dict(self)

    class BaseTool:
        """verl.tools.base_tool.BaseTool's interface (v0.7.0)."""

        def __init__(self, config, tool_schema):
            self.config = config
            self.tool_schema = tool_schema or self.get_openai_tool_schema()
            assert self.tool_schema is not None, "Tool schema is not set!"
            self.name = self.tool_schema.function.name

        def get_openai_tool_schema(self):
            return self.tool_schema

        async def create(self, instance_id=None, **kwargs):
            return (instance_id or str(uuid4())), ToolResponse()

        async def execute(self, instance_id, parameters, **kwargs):
            return ToolResponse(text="Updated the tool state."), 0.0, {}

        async def calc_reward(self, instance_id, **kwargs):
            return 0.0

        async def release(self, instance_id, **kwargs):
            pass


__all__ = [
    "VatDescribeTool", "VatSampleTool", "VatSqlTool", "VatTryTool", "VatSubmitTool",
    "compute_score", "dataset_rows", "HAVE_VERL",
]

_corpus = _rewards._corpus  # one handle per corpus root and process


def _schema(tool_set, name):
    for s in tool_schemas(tool_set):
        if s["function"]["name"] == name:
            if HAVE_VERL:
                return OpenAIFunctionToolSchema.model_validate(s)
            return _Schema(s)
    raise ValueError(f"vat has no tool {name!r} in the {tool_set} tool set")


class _VatTool(BaseTool):
    tool_name = None      # set by each class
    tool_set = "data"     # the set its schema comes from

    # episodes of instances created without agent_data, by instance id
    _instances = {}
    _instances_lock = threading.Lock()

    def __init__(self, config, tool_schema=None):
        self.config = dict(config or {})
        if "tool_set" in self.config:
            self.tool_set = self.config["tool_set"]
        super().__init__(self.config, tool_schema)

    def get_openai_tool_schema(self):
        if getattr(self, "tool_schema", None) is not None:
            return self.tool_schema
        return _schema(self.tool_set, self.tool_name)

    def _task(self, kwargs):
        """(root, task_id) from create's kwargs (create_kwargs first)."""
        ck = kwargs.get("create_kwargs") or {}
        task_id = ck.get("task_id") or kwargs.get("task_id")
        root = (ck.get("root") or kwargs.get("root") or self.config.get("root")
                or os.environ.get("VAT_ROOT"))
        return root, task_id

    async def create(self, instance_id=None, **kwargs):
        if instance_id is None:
            instance_id = str(uuid4())
        root, task_id = self._task(kwargs)
        with self._instances_lock:
            slot = self._instances.get(instance_id)
            if slot is None:
                self._instances[instance_id] = {"root": root, "task_id": task_id, "env": None,
                                                "refs": 1}
            else:  # one instance id shared by a trajectory's tools
                slot["refs"] += 1
        return instance_id, ToolResponse()

    def _env(self, instance_id, agent_data):
        """The trajectory's episode, opened on first use."""
        slot = self._instances.get(instance_id)
        if slot is None:
            raise ValueError(f"vat: no tool instance {instance_id!r}: call create first")
        holder = getattr(agent_data, "extra_fields", None) if agent_data is not None else None
        env = holder.get("vat_env") if isinstance(holder, dict) else slot["env"]
        if env is None:
            if not slot["root"] or not slot["task_id"]:
                raise ValueError("vat: tools_kwargs create_kwargs need 'task_id' and 'root' "
                                 "(or the tool config's root, or VAT_ROOT)")
            env = Env(_corpus(slot["root"]))
            env.reset(slot["task_id"])
            if isinstance(holder, dict):
                holder["vat_env"] = env
            else:
                slot["env"] = env
        return env

    async def execute(self, instance_id, parameters, **kwargs):
        env = self._env(instance_id, kwargs.get("agent_data"))
        was_done = env.done
        obs, reward, done = env.step({"name": self.tool_name, "arguments": parameters or {}})
        metrics = {"vat_calls": env.calls}
        if self.tool_name == "submit" and not was_done and done:
            return ToolResponse(text=obs), float(reward), metrics
        return ToolResponse(text=obs), None, metrics

    async def calc_reward(self, instance_id, **kwargs):
        slot = self._instances.get(instance_id)
        holder = getattr(kwargs.get("agent_data"), "extra_fields", None)
        env = holder.get("vat_env") if isinstance(holder, dict) else (slot or {}).get("env")
        return env.reward if env is not None else 0.0

    async def release(self, instance_id, **kwargs):
        with self._instances_lock:
            slot = self._instances.get(instance_id)
            if slot is None:
                return
            slot["refs"] -= 1
            if slot["refs"] > 0:
                return
            del self._instances[instance_id]
        if slot["env"] is not None:
            slot["env"].close()


class VatDescribeTool(_VatTool):
    tool_name = "describe"


class VatSampleTool(_VatTool):
    tool_name = "sample"


class VatSqlTool(_VatTool):
    tool_name = "sql"


class VatTryTool(_VatTool):
    tool_name = "try"
    tool_set = "regex"


class VatSubmitTool(_VatTool):
    tool_name = "submit"


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's compute_score for vat episodes, a dict with the keys of
    vat.rewards.verl_compute_score (verl's reward manager logs every key
    but "score" as a metric, so every call gives the same keys): the
    submitted answer's score (the last non-None entry of
    extra_info["tool_rewards"], which only submit fills; code "submitted",
    extract_rule "submit"; the submit observation showed its verdict), else
    the final response scored as an answer (extract "auto")."""
    info = extra_info if isinstance(extra_info, dict) else {}
    submitted = [r for r in (info.get("tool_rewards") or []) if r is not None]
    if submitted:
        score = float(submitted[-1])
        return {"score": score, "code": "submitted", "gate_passed": score > 0.0,
                "is_trap": False, "extract_rule": "submit"}
    return _rewards.verl_compute_score(data_source, solution_str, ground_truth, info, **kwargs)


def dataset_rows(root, split="train", tool_set="data"):
    """verl dataset rows (one per task of the env table's split whose tools
    are tool_set), ready for pandas/datasets to write as parquet."""
    root = os.path.realpath(os.fspath(root))
    path = os.path.join(root, "out", "env", split + ".jsonl")
    names = [s["function"]["name"] for s in tool_schemas(tool_set)]
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["tool_set"] != tool_set:
                continue
            task = {"task_id": r["task_id"], "root": root}
            rows.append({
                "data_source": "vat/" + r["template"],
                "agent_name": "tool_agent",
                "prompt": r["prompt"],
                "ability": r["family"],
                "reward_model": {"style": "rule", "ground_truth": ""},
                "extra_info": {
                    "split": split,
                    "task_id": r["task_id"],
                    "root": root,
                    "need_tools_kwargs": True,
                    "tools_kwargs": {n: {"create_kwargs": dict(task)} for n in names},
                },
            })
    return rows
