#!/usr/bin/python3
"""python_tables.py -- the corpus tables load as they are.

Builds a corpus with every registered template at a count of at least
--count (default 40) from the repository's seeds.toml, packs it with
`vat pack`, and checks, printing one line per failure:

  1. one schema per table: every row of a table (both splits) has the same
     keys in the same order, every key path (recursively, list items
     included) holds exactly one JSON type across all rows, null only where
     the table's JSON Schema allows it, and every nested object has the
     same members in every row;
  2. every row validates against docs/schemas/<table>.schema.json (draft
     2020-12, python3-jsonschema);
  3. the card's front matter (python3-yaml), in out/README.md and in the
     packed README.md: every data_files path exists, each config's
     dataset_info.features match the rows exactly (names, order, types) and
     agree with the schema, and the split counts are the row counts;
  4. the answers: value and abstain golds and `expected` are canonical JSON
     text (Python's compact json.dumps of the parsed value gives the same
     bytes), the trainer tables carry the experience prompt and gold
     exactly once in TRL's conversational form, self_contained agrees
     across tables and with the prompt;
  5. the packed folder alone: every path in every row and in data_files
     resolves below it, each fixture's SHA-256 is the one its rows record,
     binary fixtures are marked for Git LFS.

Debian's python3 with python3-jsonschema and python3-yaml only.  Exits 0
when everything holds, 1 on a failure, 2 on a usage error or a corpus that
cannot be built.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import jsonschema
    import yaml
except ImportError as err:  # a clear line, not a traceback
    print(f"python_tables: {err} (install python3-jsonschema and python3-yaml; make deps)")
    sys.exit(2)

TABLES = ["experience", "fixture_generators", "sft_examples", "rollouts", "preference_pairs",
          "verifiers", "rubric_items", "env", "grpo", "sft_reasoning"]
FENCE_TAG = {"value": "json", "abstain": "json", "regex": "regex", "sql": "sql"}
SPLITS = ["train", "test"]
BASE = None  # the packed folder the checks read fixtures from

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def jtype(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def read_rows(base, table):
    rows = {}
    for split in SPLITS:
        with open(os.path.join(base, "out", table, split + ".jsonl"), encoding="utf-8") as f:
            rows[split] = [json.loads(line) for line in f if line.strip()]
    return rows


# ---- 1. one schema per table ----------------------------------------------

def schema_at(schema, path):
    """The subschema of a key path ("a.b[]" style list), or None."""
    s = schema
    for part in path:
        if s is None:
            return None
        if part == "[]":
            s = s.get("items")
        else:
            s = s.get("properties", {}).get(part)
    return s


def allows_null(sub):
    t = sub.get("type") if sub else None
    return t == "null" or (isinstance(t, list) and "null" in t)


def check_one_schema(table, rows, schema):
    types, members = {}, {}

    def walk(path, v):
        types.setdefault(path, set()).add(jtype(v))
        if isinstance(v, dict):
            members.setdefault(path, set()).add(tuple(v.keys()))
            for k, x in v.items():
                walk(path + (k,), x)
        elif isinstance(v, list):
            for x in v:
                walk(path + ("[]",), x)

    n = 0
    for split in SPLITS:
        for row in rows[split]:
            walk((), row)
            n += 1
    if n == 0:
        fail(f"{table}: no rows")
        return
    for path, ms in members.items():
        if len(ms) != 1:
            fail(f"{table}: the objects at {'.'.join(path) or '(row)'} have {len(ms)} different "
                 f"member lists, e.g. {sorted(ms)[:2]}")
    for path, ts in types.items():
        non_null = ts - {"null"}
        where = ".".join(path) or "(row)"
        if len(non_null) != 1:
            fail(f"{table}: {where} holds {sorted(ts)}")
        if "null" in ts and not allows_null(schema_at(schema, path)):
            fail(f"{table}: {where} holds null, which its schema does not allow")


# ---- 3. the card -----------------------------------------------------------

DTYPE_TYPE = {"string": "string", "int64": "integer", "float64": "number", "bool": "boolean"}


def front_matter(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not text.startswith("---\n"):
        fail(f"{path}: no YAML front matter")
        return {}
    end = text.index("\n---\n", 3)
    return yaml.safe_load(text[4:end + 1])


def feature_vs_value(where, feat, v, nullable):
    """Checks one value against one dataset_info feature."""
    if v is None:
        if not nullable:
            fail(f"{where}: null where the feature does not allow it")
        return
    if "dtype" in feat:
        if jtype(v) != DTYPE_TYPE.get(feat["dtype"], "?"):
            fail(f"{where}: {jtype(v)} where the feature says {feat['dtype']}")
    elif "sequence" in feat:
        if not isinstance(v, list):
            fail(f"{where}: {jtype(v)} where the feature says a sequence")
        else:
            for x in v:
                if jtype(x) != DTYPE_TYPE.get(feat["sequence"], "?"):
                    fail(f"{where}[]: {jtype(x)} where the feature says {feat['sequence']}")
    elif "struct" in feat:
        features_vs_row(where, feat["struct"], v, {})
    elif "list" in feat:
        if not isinstance(v, list):
            fail(f"{where}: {jtype(v)} where the feature says a list")
        else:
            for x in v:
                features_vs_row(where + "[]", feat["list"], x, {})
    else:
        fail(f"{where}: feature {feat} has no type")


def features_vs_row(where, feats, row, schema_props):
    if not isinstance(row, dict):
        fail(f"{where}: {jtype(row)} where the features say an object")
        return
    names = [f["name"] for f in feats]
    if names != list(row.keys()):
        fail(f"{where}: features {names} but row keys {list(row.keys())}")
        return
    for f in feats:
        nullable = allows_null(schema_props.get(f["name"]))
        feature_vs_value(f"{where}.{f['name']}", f, row[f["name"]], nullable)


def feature_vs_schema(where, feat, sub):
    """A feature and a JSON Schema fragment describe the same shape."""
    if sub is None:
        fail(f"{where}: in the features, not in the schema")
        return
    t = sub.get("type")
    types = set(t) if isinstance(t, list) else {t}
    if "dtype" in feat:
        if types - {"null"} != {DTYPE_TYPE.get(feat["dtype"])}:
            fail(f"{where}: feature {feat['dtype']}, schema {t}")
    elif "sequence" in feat:
        if types != {"array"} or sub.get("items", {}).get("type") != DTYPE_TYPE.get(
                feat["sequence"]):
            fail(f"{where}: feature sequence of {feat['sequence']}, schema {sub}")
    elif "struct" in feat or "list" in feat:
        members = feat.get("struct") or feat.get("list")
        if "list" in feat:
            if types != {"array"}:
                fail(f"{where}: feature list, schema {t}")
                return
            sub = sub.get("items", {})
        features_vs_schema(where, members, sub)


def features_vs_schema(where, feats, schema):
    props = schema.get("properties", {})
    if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
        fail(f"{where}: the schema is not a strict object")
    if [f["name"] for f in feats] != list(props):
        fail(f"{where}: features {[f['name'] for f in feats]}, schema {list(props)}")
    if sorted(schema.get("required", [])) != sorted(props):
        fail(f"{where}: the schema does not require every member")
    for f in feats:
        feature_vs_schema(f"{where}.{f['name']}", f, props.get(f["name"]))


def check_card(card_path, base, rows, schemas, prefix):
    fm = front_matter(card_path)
    for key in ("license", "task_categories", "size_categories", "configs", "dataset_info"):
        if key not in fm:
            fail(f"{card_path}: no '{key}' in the front matter")
    card_dir = os.path.dirname(card_path)
    configs = {c["config_name"]: c for c in fm.get("configs", [])}
    infos = {c["config_name"]: c for c in fm.get("dataset_info", [])}
    if sorted(configs) != sorted(TABLES) or sorted(infos) != sorted(TABLES):
        fail(f"{card_path}: configs {sorted(configs)}, dataset_info {sorted(infos)}")
    for table in TABLES:
        for df in configs.get(table, {}).get("data_files", []):
            want = f"{prefix}{table}/{df['split']}.jsonl"
            if df["path"] != want:
                fail(f"{card_path}: {table} {df['split']} data_files is {df['path']}, not {want}")
            if not os.path.isfile(os.path.join(card_dir, df["path"])):
                fail(f"{card_path}: data_files path {df['path']} does not exist")
        info = infos.get(table, {})
        feats = info.get("features", [])
        features_vs_schema(f"{table} features/schema", feats, schemas[table])
        props = schemas[table].get("properties", {})
        for split in SPLITS:
            for i, row in enumerate(rows[table][split]):
                before = len(failures)
                features_vs_row(f"{table}/{split}:{i + 1}", feats, row, props)
                if len(failures) > before:
                    break  # one row is enough to say why
        counts = {s["name"]: s["num_examples"] for s in info.get("splits", [])}
        for split in SPLITS:
            if counts.get(split) != len(rows[table][split]):
                fail(f"{card_path}: {table} {split} num_examples {counts.get(split)}, rows "
                     f"{len(rows[table][split])}")
    return fm


# ---- 4. answers and trainer forms -----------------------------------------

def canonical(text):
    return json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))


def check_answers(rows):
    def by_task(table):
        return {r["task_id"]: r for s in SPLITS for r in rows[table][s]}
    exp, sft, pref, ver, env, grpo, reasoned = (
        by_task(t) for t in ("experience", "sft_examples", "preference_pairs", "verifiers", "env",
                             "grpo", "sft_reasoning"))
    ro = {(r["task_id"], r["role"]): r for s in SPLITS for r in rows["rollouts"][s]}
    kinds = {}
    levels = {}
    for tid, e in exp.items():
        kind = e["answer_kind"]
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind in ("value", "abstain"):
            try:
                if canonical(e["gold"]) != e["gold"]:
                    fail(f"{tid}: gold {e['gold']!r} is not canonical JSON text")
            except ValueError:
                fail(f"{tid}: gold {e['gold']!r} is not JSON")
        if ro[(tid, "gold")]["answer"] != e["gold"]:
            fail(f"{tid}: the gold rollout answer differs from experience.gold")
        try:
            params = json.loads(e["params_json"])
            if not isinstance(params, dict) or canonical(e["params_json"]) != e["params_json"]:
                fail(f"{tid}: params_json is not a canonical JSON object")
        except ValueError:
            fail(f"{tid}: params_json is not JSON")
        s, p, v = sft.get(tid), pref.get(tid), ver.get(tid)
        if not s or not p or not v:
            fail(f"{tid}: missing from sft_examples, preference_pairs or verifiers")
            continue
        want_pair = "program" if kind in ("regex", "sql") else "value"
        if p.get("pair_kind") != want_pair:
            fail(f"{tid}: pair_kind {p.get('pair_kind')!r}, want {want_pair!r} for {kind}")
        form = e.get("answer_form")
        if e["family"] == "analytics" and form not in ("value", "sql"):
            fail(f"{tid}: analytics answer_form {form!r}")
        if form == "sql" and kind != "sql":
            fail(f"{tid}: answer_form sql with answer_kind {kind}")
        user = [{"role": "user", "content": e["prompt"]}]
        if s["prompt"] != user or p["prompt"] != user:
            fail(f"{tid}: the trainer prompt is not [user: experience.prompt]")
        gold = [{"role": "assistant", "content": e["gold"]}]
        if s["completion"] != gold or p["chosen"] != gold:
            fail(f"{tid}: completion / chosen is not [assistant: experience.gold]")
        if p["rejected"] != [{"role": "assistant", "content": ro[(tid, "trap")]["answer"]}]:
            fail(f"{tid}: rejected is not [assistant: the trap rollout's answer]")
        if not (e["self_contained"] == s["self_contained"] == p["self_contained"]):
            fail(f"{tid}: self_contained differs between tables")
        g, r = grpo.get(tid), reasoned.get(tid)
        if not g or not r:
            fail(f"{tid}: missing from grpo or sft_reasoning")
            continue
        chat = g["prompt"]
        if (len(chat) != 2 or chat[0]["role"] != "system" or chat[1] != user[0]
                or r["prompt"] != chat):
            fail(f"{tid}: the grpo / sft_reasoning prompt is not [system, user: experience.prompt]")
        if (g["template"], g["answer_kind"], g["difficulty"], g["self_contained"]) != (
                e["template"], kind, e["difficulty"], e["self_contained"]):
            fail(f"{tid}: grpo's template, answer_kind, difficulty or self_contained differs")
        tag = FENCE_TAG[kind]
        if f"tagged {tag}" not in chat[0]["content"]:
            fail(f"{tid}: the system message does not ask for a {tag} fence")
        worked = r["completion"][0]["content"]
        fence = f"\n```{tag}\n{e['gold']}\n```\n"
        if r["completion"][0]["role"] != "assistant" or not worked.endswith(fence) or len(
                worked) <= len(fence):
            fail(f"{tid}: the worked completion does not reason and end in a {tag} fence of gold")
        shows_part = "too long to show" in e["prompt"] or "(they are in the file)" in e[
            "prompt"] or "rows (the other" in e["prompt"] or "shown; the rest are in the file" in e[
            "prompt"]  # the last: a workbook's sheet cut short (docs/workbooks.md)
        if kind in ("value", "abstain") and e["self_contained"] == shows_part:
            fail(f"{tid}: self_contained is {e['self_contained']} but the prompt "
                 f"{'shows part' if shows_part else 'shows all'} of the fixture")
        if kind in ("regex", "sql") and not e["self_contained"]:
            fail(f"{tid}: a {kind} task whose description should suffice is not self_contained")
        # no single-turn value prompt asks about rows it does not show
        # (docs/difficulty.md)
        if kind in ("value", "abstain") and not e["self_contained"]:
            fail(f"{tid}: a level {e['difficulty']} value prompt asks about rows it does not show")
        levels.setdefault(e["template"], set()).add(e["difficulty"])
        spec = json.loads(v["spec_json"])
        if not isinstance(spec, dict) or "expected" in spec:
            fail(f"{tid}: spec_json is not an object without expected")
        if v["expected"] is not None:
            if canonical(v["expected"]) != v["expected"]:
                fail(f"{tid}: verifiers.expected is not canonical JSON text")
            if kind == "value" and canonical(v["expected"]) != e["gold"]:
                fail(f"{tid}: verifiers.expected differs from the value gold")
        elif v["checker"] == "value":
            fail(f"{tid}: a value checker without expected")
        check_env(tid, e, env.get(tid), ro)
    # the default seeds.toml spreads levels 1-5 over every template
    for name, seen in sorted(levels.items()):
        if seen != {1, 2, 3, 4, 5}:
            fail(f"{name}: levels {sorted(seen)}, not every level 1 to 5")
    return kinds


TOOL_NAMES = {"data": ["describe", "sample", "sql", "submit"], "regex": ["sample", "try", "submit"]}


def check_env(tid, e, row, ro):
    """The env row: the agent prompt (one user message, no data beyond the
    schema and a few rows), the tools of its set, an env spec reading the
    main fixture, and a transcript ending in the agent rollout's answer."""
    if row is None:
        fail(f"{tid}: no env row")
        return
    for k in ("template", "family", "answer_kind"):
        if row[k] != e[k]:
            fail(f"{tid}: env {k} {row[k]!r}, experience {e[k]!r}")
    if len(row["prompt"]) != 1 or row["prompt"][0]["role"] != "user":
        fail(f"{tid}: the env prompt is not one user message")
    prompt = row["prompt"][0]["content"]
    names = [t["function"]["name"] for t in json.loads(row["tools"])]
    if names != TOOL_NAMES.get(row["tool_set"]):
        fail(f"{tid}: tools {names} for tool set {row['tool_set']!r}")
    spec = json.loads(row["env_json"])
    if spec.get("fixture") != e["fixture"]["path"] or spec.get("tools") != row["tool_set"]:
        fail(f"{tid}: env_json does not read the main fixture with its tools")
    if "```csv" in prompt or "INSERT INTO" in prompt:
        fail(f"{tid}: the env prompt still shows the data")
    if e["fixture"]["format"] == "csv" and spec.get("tables"):
        with open(os.path.join(BASE, e["fixture"]["path"]), encoding="utf-8") as f:
            lines = f.read().splitlines()
        skip = max([t.get("skip", 0) for t in spec["tables"]] + [1])
        for line in lines[skip + 3:]:  # past the few rows the prompt samples
            if len(line) > 20 and line in prompt:
                fail(f"{tid}: the env prompt shows a data row past the first three: {line[:60]}")
                break
    agent = ro.get((tid, "agent"))
    msgs = row["completion"]
    if agent is None or not msgs:
        fail(f"{tid}: no expert transcript or no agent rollout")
        return
    if not (agent["gate_passed"] and agent["score"] == 1.0):
        fail(f"{tid}: the agent rollout does not score 1")
    if msgs[-1]["role"] != "assistant" or msgs[-1]["content"] != agent["answer"]:
        fail(f"{tid}: the transcript does not end in the agent rollout's answer")
    calls = [m for m in msgs if m["tool_calls"]]
    if not calls or calls[-1]["tool_calls"][0]["function"]["name"] != "submit" or json.loads(
            calls[-1]["tool_calls"][0]["function"]["arguments"]) != {"answer": agent["answer"]}:
        fail(f"{tid}: the transcript does not submit the agent rollout's answer")
    for i, m in enumerate(msgs[:-1]):
        want = "assistant" if i % 2 == 0 else "tool"
        if m["role"] != want or (want == "tool" and m["tool_call_id"] != msgs[i - 1][
                "tool_calls"][0]["id"]):
            fail(f"{tid}: transcript message {i} is not the {want} turn it should be")
            break


# ---- 5. the packed folder --------------------------------------------------

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def check_built_fixtures(root, rows):
    """Every file the build left under fixtures/ is one a row names: a
    redrawn attempt's files (a workbook, where the admitted draw wrote a
    CSV) do not stay behind to be listed in the manifest."""
    named = set()
    for s in SPLITS:
        for e in rows["experience"][s]:
            named.update(fx["path"] for fx in [e["fixture"]] + e["variants"])
        named.update(g["path"] for g in rows["fixture_generators"][s])
    for d, _, files in os.walk(os.path.join(root, "fixtures")):
        for name in files:
            rel = os.path.relpath(os.path.join(d, name), root).replace(os.sep, "/")
            if rel not in named:
                fail(f"build: '{rel}' is under fixtures/, but no row names it")


def check_pack(dest, rows):
    named = {}  # path -> recorded sha256 (None when a row names it without one)
    for s in SPLITS:
        for e in rows["experience"][s]:
            for fx in [e["fixture"]] + e["variants"]:
                named.setdefault(fx["path"], set()).add(fx["sha256"])
        for g in rows["fixture_generators"][s]:
            named.setdefault(g["path"], set()).add(g["sha256"])
        for v in rows["verifiers"][s]:
            for rel in json.loads(v["spec_json"]).get("fixtures", []):
                named.setdefault(rel, set())
    binary = set()  # the suffixes of binary fixtures (a NUL byte early on, as git judges)
    for rel, shas in sorted(named.items()):
        p = os.path.join(dest, rel)
        if os.path.isabs(rel) or ".." in rel.split("/") or not os.path.isfile(p):
            fail(f"pack: '{rel}' does not resolve from the packed folder")
            continue
        if len(shas) > 1 or (shas and sha256(p) not in shas):
            fail(f"pack: '{rel}' does not have the SHA-256 its rows record")
        with open(p, "rb") as f:
            if b"\0" in f.read(8000):
                binary.add(rel.rsplit(".", 1)[-1])
    with open(os.path.join(dest, ".gitattributes"), encoding="utf-8") as f:
        attrs = f.read()
    if not {"sqlite", "xlsx"} <= binary:
        fail(f"pack: binary fixtures of kinds {sorted(binary)}; a build of every template has "
             "sqlite and xlsx")
    for ext in sorted(binary):
        if not re.search(rf"^\*\.{ext} filter=lfs diff=lfs merge=lfs -text$", attrs, re.M):
            fail(f"pack: .gitattributes does not send *.{ext} through Git LFS")
    return len(named)


def build_config(vat, seeds, count, path):
    text = open(seeds, encoding="utf-8").read()
    text = re.sub(r"^count = (\d+)$", lambda m: f"count = {max(int(m.group(1)), count)}", text,
                  flags=re.M)
    listed = subprocess.run([vat, "list"], capture_output=True, text=True, check=True).stdout
    for line in listed.splitlines()[1:]:
        name = line.split()[0]
        if f"[templates.{name}]" not in text:
            text += f"\n[templates.{name}]\ncount = {count}\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vat", required=True)
    ap.add_argument("--config", required=True, help="the repository's seeds.toml")
    ap.add_argument("--schemas", required=True, help="docs/schemas")
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--keep", help="build here instead of a temporary folder")
    args = ap.parse_args()
    schemas = {}
    for t in TABLES:
        with open(os.path.join(args.schemas, t + ".schema.json"), encoding="utf-8") as f:
            schemas[t] = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schemas[t])
    with tempfile.TemporaryDirectory(prefix="vat-tables-") as tmp:
        base = args.keep or tmp
        root, dest = os.path.join(base, "corpus"), os.path.join(base, "packed")
        cfg = os.path.join(base, "seeds.toml")
        os.makedirs(root, exist_ok=True)
        build_config(args.vat, args.config, args.count, cfg)
        b = subprocess.run([args.vat, "build", "--config", cfg, "--root", root],
                           capture_output=True, text=True)
        if b.returncode != 0:
            print(f"python_tables: vat build failed ({b.returncode}): {b.stderr.strip()}")
            return 2
        p = subprocess.run([args.vat, "pack", "--root", root, "--to", dest],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"python_tables: vat pack failed ({p.returncode}): {p.stderr.strip()}")
            return 2
        # Everything below reads the packed folder alone (its tables are the
        # build's, linked or copied).
        rows = {t: read_rows(dest, t) for t in TABLES}
        ntasks = sum(len(rows["experience"][s]) for s in SPLITS)
        per_template = {}
        for s in SPLITS:
            for e in rows["experience"][s]:
                per_template[e["template"]] = per_template.get(e["template"], 0) + 1
        short = {k: v for k, v in per_template.items() if v < args.count}
        if short:
            fail(f"templates under {args.count} tasks: {short}")
        nrows = 0
        for t in TABLES:
            check_one_schema(t, rows[t], schemas[t])
            validator = jsonschema.Draft202012Validator(schemas[t])
            for s in SPLITS:
                for i, row in enumerate(rows[t][s]):
                    nrows += 1
                    err = next(iter(validator.iter_errors(row)), None)
                    if err is not None:
                        fail(f"{t}/{s}:{i + 1}: schema: {err.message} at "
                             f"{'/'.join(map(str, err.absolute_path))}")
        check_card(os.path.join(root, "out", "README.md"), root, rows, schemas, "")
        check_card(os.path.join(dest, "README.md"), dest, rows, schemas, "out/")
        global BASE
        BASE = dest
        kinds = check_answers(rows)
        nfix = check_pack(dest, rows)
        check_built_fixtures(root, rows)
        sc = sum(e["self_contained"] for s in SPLITS for e in rows["experience"][s])
        print(f"python_tables: {len(per_template)} templates, {ntasks} tasks ({kinds}), "
              f"{nrows} rows validated, {nfix} fixture paths resolved from the packed folder, "
              f"{sc} self-contained prompts; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
